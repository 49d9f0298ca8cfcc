"""Property tests (hypothesis): any basic-indexing key on any small shape gives PyTorch's values,
and writes through the view land where PyTorch's do."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import oneflow as flow


@st.composite
def shape_and_key(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    items = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "full", "none"] if size else ["slice"]))
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            items.append(
                slice(
                    draw(st.one_of(st.none(), st.integers(-6, 6))),
                    draw(st.one_of(st.none(), st.integers(-6, 6))),
                    draw(st.integers(1, 3)),
                )
            )
        elif kind == "none":
            items.extend([None, slice(None)])
        else:
            items.append(slice(None))
    return shape, tuple(items)


@settings(max_examples=150, deadline=None)
@given(shape_and_key())
def test_basic_indexing_read_and_write(case):
    shape, key = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    f, t = flow.tensor(a), torch.tensor(a)
    fv, tv = f[key], t[key]
    assert tuple(fv.shape) == tuple(tv.shape)
    np.testing.assert_array_equal(fv.numpy(), tv.numpy())
    f[key] = -1.0
    t[key] = -1.0
    np.testing.assert_array_equal(f.numpy(), t.numpy())
