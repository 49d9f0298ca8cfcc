"""PyTorch's remaining nn names: NLLLoss2d, Container, F.conv_tbc (also oneflow.conv_tbc),
F.native_channel_shuffle, against PyTorch."""

import numpy as np
import pytest
import torch

import oneflow as flow


def test_nll_loss_2d_and_container_like_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    y = rng.integers(0, 3, (2, 4, 4))
    f = flow.nn.NLLLoss2d(reduction="sum")(flow.tensor(x).log_softmax(1), flow.tensor(y))
    t = torch.nn.NLLLoss2d(reduction="sum")(torch.tensor(x).log_softmax(1), torch.tensor(y))
    np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-5)
    assert isinstance(flow.nn.NLLLoss2d(), flow.nn.NLLLoss)
    with pytest.warns(UserWarning, match="nn.Container is deprecated"):
        c = flow.nn.Container(a=flow.nn.Linear(2, 2), b=flow.nn.ReLU())
    assert list(c.state_dict()) == ["a.weight", "a.bias"] and isinstance(c.b, flow.nn.ReLU)


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc_values_and_gradients_like_torch(pad):
    rng = np.random.default_rng(pad)
    x = rng.standard_normal((7, 2, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    fa = [flow.tensor(a, requires_grad=True) for a in (x, w, b)]
    ta = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    fo, to = flow.conv_tbc(*fa, pad), torch.conv_tbc(*ta, pad)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    fo.square().sum().backward()
    to.square().sum().backward()
    for f, t in zip(fa, ta):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="conv_tbc"):
        flow.nn.functional.conv_tbc(fa[0], fa[1][:, :2], fa[2])


def test_native_channel_shuffle_like_torch():
    x = np.arange(2 * 6 * 2).reshape(2, 6, 2).astype(np.float32)
    np.testing.assert_array_equal(
        flow.nn.functional.native_channel_shuffle(flow.tensor(x), 3).numpy(),
        torch.nn.functional.native_channel_shuffle(torch.tensor(x), 3).numpy(),
    )
