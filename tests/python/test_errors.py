"""Bad input raises a Python exception that names the op, what was expected and what came; the
process survives and the next op works."""

import pytest
import torch

import oneflow as flow


def test_matmul_shape_mismatch_names_op_and_shapes():
    with pytest.raises(RuntimeError) as e:
        flow.matmul(flow.ones(2, 3), flow.ones(2, 3))
    msg = str(e.value)
    assert msg.startswith("matmul") and "(2, 3)" in msg and "2x3" in msg
    # the process is fine afterwards
    assert (flow.ones(2, 3) @ flow.ones(3, 2)).sum().item() == 12.0


def test_broadcast_mismatch_is_runtime_error():
    with pytest.raises(RuntimeError, match=r"add: shapes \(3,\) and \(4,\)"):
        flow.ones(3) + flow.ones(4)


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError, match="add"):
        flow.add(flow.ones(2), "x")
    with pytest.raises(TypeError, match="matmul"):
        flow.matmul(flow.ones(2, 2), [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="dtype"):
        flow.zeros(2, dtype="float32")
    with pytest.raises(TypeError):
        flow.zeros(2.5)


def test_dim_out_of_range_is_index_error():
    with pytest.raises(IndexError, match=r"sum: dimension out of range"):
        flow.ones(2, 3).sum(2)
    with pytest.raises(IndexError):
        flow.ones(2, 3).transpose(0, 5)


def test_negative_size_and_bad_reshape():
    with pytest.raises(RuntimeError, match="negative dimension"):
        flow.zeros(2, -1)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        flow.ones(2, 3).reshape(4, 2)


def test_requires_grad_on_integer_tensor():
    with pytest.raises(RuntimeError, match="floating point"):
        flow.ones(2, dtype=flow.int64, requires_grad=True)


def test_device_mismatch_or_missing_backend():
    with pytest.raises((RuntimeError, ValueError)):
        flow.ones(2, device="gpu")


def test_lazy_and_global_modes_are_explicitly_not_implemented():
    prev = flow._oneflow_internal._set_lazy_mode(True)
    try:
        with pytest.raises(NotImplementedError, match="lazy"):
            flow.ones(2) + 1
    finally:
        flow._oneflow_internal._set_lazy_mode(prev)
    # oneflow.zeros(placement=...) makes global tensors in Python; the bare core op says where
    with pytest.raises(NotImplementedError, match="pass placement= and sbp= to oneflow.zeros"):
        flow._C.zeros(2, placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast)
    assert flow.zeros(2, placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast).is_global
    assert (flow.ones(2) + 1).sum().item() == 4.0


def test_float_only_ops_reject_integers_clearly():
    with pytest.raises(RuntimeError, match="mean.*int64"):
        flow.ones(3, dtype=flow.int64).mean()
    with pytest.raises(NotImplementedError, match="softmax.*int64"):
        flow.ones(3, dtype=flow.int64).softmax(0)
    with pytest.raises(RuntimeError, match="gelu: approximate"):
        flow.nn.functional.gelu(flow.ones(2), approximate="fast")
    with pytest.raises(IndexError, match="softmax"):
        flow.ones(2, 3).softmax(2)


def test_expand_past_int64_element_count_is_an_error():
    with pytest.raises(RuntimeError, match=r"expand: the expanded size .* more elements"):
        flow.ones(1).expand(2**62, 2**62)
    assert flow.ones(1).expand(2**31, 2**31).shape == (2**31, 2**31)  # a view: no memory


# ---- the exception types of PyTorch ------------------------------------------------------
#
# (id, call): each call is written once against a library `lib` (oneflow or torch) and must
# raise in both, with the same exception class: the same builtin class, or for a class a library
# defines (torch.linalg.LinAlgError) a class of the same name over the same builtin bases.


def F(lib):
    return lib.nn.functional


def i64(lib, *shape):
    return lib.ones(*shape, dtype=lib.int64)


def b8(lib, *shape):
    return lib.ones(*shape, dtype=lib.bool)


BAD_CALLS = [
    # unary and binary ops on dtypes they do not implement
    ("bitwise_not float", lambda lib: lib.bitwise_not(lib.ones(3))),
    ("bitwise_and float", lambda lib: lib.bitwise_and(lib.ones(3), lib.ones(3))),
    ("bitwise_or float", lambda lib: lib.bitwise_or(lib.ones(3), lib.ones(3))),
    ("bitwise_xor float", lambda lib: lib.bitwise_xor(lib.ones(3), lib.ones(3))),
    ("abs bool", lambda lib: lib.abs(b8(lib, 3))),
    ("floor bool", lambda lib: lib.floor(b8(lib, 3))),
    ("round bool", lambda lib: lib.round(b8(lib, 3))),
    ("neg bool", lambda lib: lib.neg(b8(lib, 3))),
    ("sub bool", lambda lib: lib.sub(b8(lib, 3), b8(lib, 3))),
    ("fmod bool", lambda lib: lib.fmod(b8(lib, 3), b8(lib, 3))),
    ("remainder bool", lambda lib: lib.remainder(b8(lib, 3), b8(lib, 3))),
    ("floor_divide bool", lambda lib: lib.floor_divide(b8(lib, 3), b8(lib, 3))),
    ("pow bool bool", lambda lib: lib.pow(b8(lib, 3), b8(lib, 3))),
    ("pow int negative int", lambda lib: lib.pow(lib.tensor([2, 3]), -1)),
    ("div rounding_mode", lambda lib: lib.div(lib.ones(2), lib.ones(2), rounding_mode="round")),
    ("where float condition", lambda lib: lib.where(lib.ones(3), lib.ones(3), lib.ones(3))),
    ("lerp int", lambda lib: lib.lerp(i64(lib, 3), i64(lib, 3), 0.5)),
    ("lerp dtypes", lambda lib: lib.lerp(lib.ones(3), lib.ones(3, dtype=lib.float64), 0.5)),
    ("add str", lambda lib: lib.add(lib.ones(2), "x")),
    ("add_ result type", lambda lib: i64(lib, 3).add_(lib.ones(3) * 0.5)),
    # shape mismatches
    ("add broadcast", lambda lib: lib.ones(3) + lib.ones(4)),
    ("mul broadcast", lambda lib: lib.ones(2, 3) * lib.ones(4, 3)),
    ("add_ broadcast", lambda lib: lib.ones(3).add_(lib.ones(2, 3))),
    ("lerp shapes", lambda lib: lib.lerp(lib.ones(3), lib.ones(4), 0.5)),
    ("where shapes", lambda lib: lib.where(b8(lib, 3), lib.ones(3), lib.ones(4))),
    ("addcmul shapes", lambda lib: lib.addcmul(lib.ones(3), lib.ones(4), lib.ones(3))),
    ("addcdiv shapes", lambda lib: lib.addcdiv(lib.ones(3), lib.ones(4), lib.ones(3))),
    ("logical_and shapes", lambda lib: lib.logical_and(lib.ones(3), lib.ones(4))),
    ("cat shapes", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)], 0)),
    ("cat ranks", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2)], 0)),
    ("cat empty", lambda lib: lib.cat([])),
    ("stack shapes", lambda lib: lib.stack([lib.ones(2), lib.ones(3)])),
    ("matmul shapes", lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(2, 3))),
    ("matmul 0-d", lambda lib: lib.matmul(lib.tensor(1.0), lib.ones(3))),
    ("matmul dtypes", lambda lib: lib.matmul(lib.ones(3, 3), lib.ones(3, 3, dtype=lib.float64))),
    ("mm 1-d", lambda lib: lib.mm(lib.ones(3), lib.ones(3))),
    ("bmm shapes", lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 2, 3))),
    ("bmm 2-d", lambda lib: lib.bmm(lib.ones(2, 3), lib.ones(3, 2))),
    ("dot sizes", lambda lib: lib.dot(lib.ones(3), lib.ones(4))),
    ("outer 2-d", lambda lib: lib.outer(lib.ones(2, 2), lib.ones(2))),
    ("cross sizes", lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(4))),
    ("cross bool", lambda lib: lib.linalg.cross(b8(lib, 3), b8(lib, 3))),
    ("cross without a dim of size 3", lambda lib: lib.cross(lib.ones(2, 2), lib.ones(2, 2))),
    ("reshape size", lambda lib: lib.ones(2, 3).reshape(4, 2)),
    ("reshape two -1", lambda lib: lib.ones(2, 3).reshape(-1, -1)),
    ("view size", lambda lib: lib.ones(2, 3).view(5)),
    ("view strides", lambda lib: lib.ones(2, 3).t().view(6)),
    ("expand size", lambda lib: lib.ones(2, 3).expand(4, 3)),
    ("expand fewer dims", lambda lib: lib.ones(2, 3).expand(3)),
    ("permute repeated", lambda lib: lib.ones(2, 3).permute(0, 0)),
    ("permute length", lambda lib: lib.ones(2, 3).permute(0)),
    ("repeat fewer dims", lambda lib: lib.ones(2, 3).repeat(2)),
    ("roll shifts and dims", lambda lib: lib.ones(2, 3).roll((1, 1), (0,))),
    ("flatten order", lambda lib: lib.ones(2, 3, 4).flatten(2, 1)),
    ("narrow past the end", lambda lib: lib.ones(2, 3).narrow(1, 2, 3)),
    ("narrow start", lambda lib: lib.ones(3).narrow(0, 5, 0)),
    ("narrow length", lambda lib: lib.ones(3).narrow(0, 0, -1)),
    ("unfold size", lambda lib: lib.ones(3).unfold(0, 5, 1)),
    ("split size 0", lambda lib: lib.ones(4).split(0)),
    ("chunk 0", lambda lib: lib.ones(4).chunk(0)),
    ("glu odd", lambda lib: F(lib).glu(lib.ones(3, 3), dim=0)),
    ("diagonal same dims", lambda lib: lib.diagonal(lib.ones(2, 3), 0, 0, 0)),
    ("tril 1-d", lambda lib: lib.tril(lib.ones(3))),
    ("trace 3-d", lambda lib: lib.trace(lib.ones(2, 2, 2))),
    ("masked_fill mask shape", lambda lib: lib.ones(3).masked_fill(b8(lib, 4), 0.0)),
    ("masked_select shapes", lambda lib: lib.masked_select(lib.ones(3), b8(lib, 4))),
    ("searchsorted batch", lambda lib: lib.searchsorted(lib.ones(3, 3), lib.ones(2, 2))),
    ("meshgrid 2-d", lambda lib: lib.meshgrid(lib.ones(2, 2), lib.ones(2), indexing="ij")),
    ("repeat_interleave negative", lambda lib: lib.ones(3).repeat_interleave(-1)),
    (
        "repeat_interleave negative tensor",
        lambda lib: lib.ones(3).repeat_interleave(lib.tensor([1, -1, 1])),
    ),
    ("pad past the size", lambda lib: F(lib).pad(lib.ones(1, 1, 2), (-3, 0))),
    # dims out of range
    ("sum dim", lambda lib: lib.ones(2, 3).sum(2)),
    ("sum negative dim", lambda lib: lib.ones(2, 3).sum(-3)),
    ("max dim", lambda lib: lib.ones(2, 3).max(5)),
    ("argmax dim", lambda lib: lib.ones(2, 3).argmax(5)),
    ("prod dim", lambda lib: lib.ones(2, 3).prod(4)),
    ("cumsum dim", lambda lib: lib.ones(2, 3).cumsum(4)),
    ("logsumexp dim", lambda lib: lib.ones(2, 3).logsumexp(4)),
    ("softmax dim", lambda lib: lib.ones(2, 3).softmax(2)),
    ("transpose dim", lambda lib: lib.ones(2, 3).transpose(0, 5)),
    ("squeeze dim", lambda lib: lib.ones(2, 3).squeeze(4)),
    ("unsqueeze dim", lambda lib: lib.ones(2, 3).unsqueeze(4)),
    ("flatten dim", lambda lib: lib.ones(2, 3).flatten(3)),
    ("flip dim", lambda lib: lib.ones(2, 3).flip(4)),
    ("sort dim", lambda lib: lib.ones(3).sort(3)),
    ("cat dim", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 3)], 2)),
    ("gather dim", lambda lib: lib.gather(lib.ones(3, 3), 2, lib.tensor([[0]]))),
    ("normalize dim", lambda lib: F(lib).normalize(lib.ones(3), dim=3)),
    # indices
    ("getitem out of bounds", lambda lib: lib.ones(2, 3)[5]),
    ("getitem float tensor", lambda lib: lib.ones(2, 3)[lib.tensor([0.0])]),
    ("getitem too many", lambda lib: lib.ones(2, 3)[0, 0, 0]),
    ("select out of bounds", lambda lib: lib.ones(2, 3).select(0, 5)),
    ("take out of bounds", lambda lib: lib.take(lib.ones(2, 2), lib.tensor([4]))),
    ("take float index", lambda lib: lib.take(lib.ones(2, 2), lib.tensor([1.0]))),
    ("index_select float", lambda lib: lib.index_select(lib.ones(3, 3), 0, lib.tensor([0.0]))),
    ("index_select bool", lambda lib: lib.index_select(lib.ones(3), 0, lib.tensor([True]))),
    ("index_select 2-d", lambda lib: lib.index_select(lib.ones(3, 3), 0, lib.tensor([[0]]))),
    ("index_select bounds", lambda lib: lib.index_select(lib.ones(3, 3), 0, lib.tensor([5]))),
    ("index_add float", lambda lib: lib.ones(3).index_add(0, lib.tensor([0.0]), lib.ones(1))),
    ("index_copy float", lambda lib: lib.ones(3).index_copy(0, lib.tensor([0.0]), lib.ones(1))),
    ("index_fill float", lambda lib: lib.ones(3).index_fill(0, lib.tensor([0.0]), 1.0)),
    ("gather rank", lambda lib: lib.gather(lib.ones(3, 3), 0, lib.tensor([0, 1]))),
    ("gather float", lambda lib: lib.gather(lib.ones(3, 3), 0, lib.tensor([[0.0]]))),
    ("gather out of bounds", lambda lib: lib.gather(lib.ones(3, 3), 0, lib.tensor([[5]]))),
    ("scatter rank", lambda lib: lib.ones(3, 3).scatter(0, lib.tensor([0]), lib.ones(3, 3))),
    ("masked_fill float mask", lambda lib: lib.ones(3).masked_fill(lib.ones(3), 0.0)),
    ("topk k", lambda lib: lib.ones(3).topk(5)),
    ("topk bool", lambda lib: b8(lib, 3).topk(1)),
    ("one_hot float", lambda lib: F(lib).one_hot(lib.tensor([0.0]), 3)),
    ("one_hot out of range", lambda lib: F(lib).one_hot(lib.tensor([5]), 3)),
    ("embedding float", lambda lib: F(lib).embedding(lib.tensor([0.0]), lib.ones(3, 2))),
    ("embedding out of range", lambda lib: F(lib).embedding(lib.tensor([5]), lib.ones(3, 2))),
    ("embedding 1-d weight", lambda lib: F(lib).embedding(lib.tensor([0]), lib.ones(3))),
    (
        "embedding padding_idx",
        lambda lib: F(lib).embedding(lib.tensor([0]), lib.ones(3, 2), padding_idx=5),
    ),
    # reductions
    ("mean int", lambda lib: i64(lib, 3).mean()),
    ("std int", lambda lib: i64(lib, 3).std()),
    ("std dim", lambda lib: lib.ones(2, 3).std(4)),
    ("var dim", lambda lib: lib.ones(2, 3).var(-3)),
    ("max of empty", lambda lib: lib.ones(0).max()),
    ("argmax of empty", lambda lib: lib.ones(0).argmax()),
    ("argmin of empty", lambda lib: lib.ones(0).argmin()),
    ("min of empty dim", lambda lib: lib.ones(0, 3).min(0)),
    ("matrix_norm 1-d", lambda lib: lib.linalg.matrix_norm(lib.ones(3))),
    ("matrix_norm ord", lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), ord=3)),
    ("vector_norm ord str", lambda lib: lib.linalg.vector_norm(lib.ones(3), ord="fro")),
    # creation and conversion
    ("zeros negative", lambda lib: lib.zeros(2, -1)),
    ("zeros dtype str", lambda lib: lib.zeros(2, dtype="float32")),
    ("arange step 0", lambda lib: lib.arange(0, 5, 0)),
    ("arange sign", lambda lib: lib.arange(0, 5, -1)),
    ("linspace negative", lambda lib: lib.linspace(0, 1, -1)),
    ("eye negative", lambda lib: lib.eye(-1)),
    ("full str", lambda lib: lib.full((2,), "x")),
    ("tensor ragged", lambda lib: lib.tensor([[1, 2], [3]])),
    ("randint empty range", lambda lib: lib.randint(5, 2, (3,))),
    ("multinomial negative", lambda lib: lib.multinomial(lib.tensor([-1.0, 1.0]), 1)),
    ("multinomial int", lambda lib: lib.multinomial(i64(lib, 2), 1)),
    ("multinomial 3-d", lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1)),
    ("multinomial too many", lambda lib: lib.multinomial(lib.ones(2), 3)),
    ("rand int", lambda lib: lib.rand(2, dtype=lib.int64)),
    ("randn int", lambda lib: lib.randn(2, dtype=lib.int64)),
    ("bernoulli int", lambda lib: lib.bernoulli(i64(lib, 2))),
    ("item of many", lambda lib: lib.ones(3).item()),
    ("bool of many", lambda lib: bool(lib.ones(3))),
    ("int of many", lambda lib: int(lib.ones(3))),
    ("float of many", lambda lib: float(lib.ones(3))),
    ("requires_grad int", lambda lib: lib.ones(2, dtype=lib.int64, requires_grad=True)),
    ("backward non-scalar", lambda lib: (lib.ones(3, requires_grad=True) * 2).backward()),
    ("backward without grad", lambda lib: lib.ones(3).sum().backward()),
    # linear algebra
    ("inv singular", lambda lib: lib.linalg.inv(lib.zeros(2, 2))),
    ("inverse singular", lambda lib: lib.inverse(lib.zeros(3, 3))),
    ("inv non-square", lambda lib: lib.linalg.inv(lib.ones(2, 3))),
    ("det non-square", lambda lib: lib.linalg.det(lib.ones(2, 2, 3))),
    ("matmul bool", lambda lib: lib.matmul(b8(lib, 2, 2), b8(lib, 2, 2))),
    # nn functions
    ("softmax int", lambda lib: i64(lib, 3).softmax(0)),
    ("log_softmax int", lambda lib: F(lib).log_softmax(i64(lib, 3), dim=0)),
    ("gelu approximate", lambda lib: F(lib).gelu(lib.ones(2), approximate="fast")),
    ("gelu int", lambda lib: F(lib).gelu(i64(lib, 3))),
    ("relu bool", lambda lib: F(lib).relu(b8(lib, 3))),
    ("hardtanh bool", lambda lib: F(lib).hardtanh(b8(lib, 3))),
    ("hardtanh min > max", lambda lib: F(lib).hardtanh(lib.ones(3), 2.0, 1.0)),
    ("leaky_relu int", lambda lib: F(lib).leaky_relu(i64(lib, 3))),
    ("elu int", lambda lib: F(lib).elu(i64(lib, 3))),
    ("silu int", lambda lib: F(lib).silu(i64(lib, 3))),
    ("softplus int", lambda lib: F(lib).softplus(i64(lib, 3))),
    ("hardswish int", lambda lib: F(lib).hardswish(i64(lib, 3))),
    ("logsigmoid int", lambda lib: F(lib).logsigmoid(i64(lib, 3))),
    ("glu int", lambda lib: F(lib).glu(i64(lib, 2, 4))),
    ("linear features", lambda lib: F(lib).linear(lib.ones(2, 3), lib.ones(4, 5))),
    ("linear bias", lambda lib: F(lib).linear(lib.ones(2, 3), lib.ones(4, 3), lib.ones(5))),
    ("conv2d channels", lambda lib: F(lib).conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 2, 3, 3))),
    ("conv1d channels", lambda lib: F(lib).conv1d(lib.ones(1, 3, 5), lib.ones(4, 2, 3))),
    ("conv2d rank", lambda lib: F(lib).conv2d(lib.ones(3, 5), lib.ones(4, 3, 3, 3))),
    ("conv2d kernel", lambda lib: F(lib).conv2d(lib.ones(1, 3, 2, 2), lib.ones(4, 3, 3, 3))),
    (
        "conv2d groups",
        lambda lib: F(lib).conv2d(lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3), groups=3),
    ),
    ("max_pool2d rank", lambda lib: F(lib).max_pool2d(lib.ones(5), 2)),
    ("max_pool2d kernel", lambda lib: F(lib).max_pool2d(lib.ones(1, 1, 2, 2), 3)),
    ("avg_pool2d padding", lambda lib: F(lib).avg_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2)),
    ("layer_norm shape", lambda lib: F(lib).layer_norm(lib.ones(2, 3), (4,))),
    (
        "batch_norm channels",
        lambda lib: F(lib).batch_norm(lib.ones(2, 3), lib.ones(4), lib.ones(4)),
    ),
    ("group_norm groups", lambda lib: F(lib).group_norm(lib.ones(2, 3, 4), 2)),
    ("layer_norm int", lambda lib: F(lib).layer_norm(i64(lib, 2, 3), (3,))),
    ("batch_norm int", lambda lib: F(lib).batch_norm(i64(lib, 2, 3), lib.ones(3), lib.ones(3))),
    ("group_norm int", lambda lib: F(lib).group_norm(i64(lib, 2, 4, 3), 2)),
    ("dropout p", lambda lib: F(lib).dropout(lib.ones(3), p=1.5)),
    ("pad mode", lambda lib: F(lib).pad(lib.ones(1, 1, 4), (1, 1), mode="foo")),
    ("pad odd length", lambda lib: F(lib).pad(lib.ones(1, 1, 4), (1,))),
    ("pad reflect size", lambda lib: F(lib).pad(lib.ones(1, 1, 4), (5, 5), mode="reflect")),
    (
        "interpolate bilinear 3-d",
        lambda lib: F(lib).interpolate(lib.ones(1, 1, 4), scale_factor=2, mode="bilinear"),
    ),
    (
        "interpolate linear 4-d",
        lambda lib: F(lib).interpolate(lib.ones(1, 1, 2, 3), scale_factor=2, mode="linear"),
    ),
    ("interpolate 2-d", lambda lib: F(lib).interpolate(lib.ones(2, 3), scale_factor=2)),
    (
        "interpolate mode",
        lambda lib: F(lib).interpolate(lib.ones(1, 1, 4), scale_factor=2, mode="foo"),
    ),
    (
        "interpolate size and scale",
        lambda lib: F(lib).interpolate(lib.ones(1, 1, 4), size=8, scale_factor=2),
    ),
    # losses
    (
        "cross_entropy float target",
        lambda lib: F(lib).cross_entropy(lib.ones(2, 3), lib.ones(2)),
    ),
    (
        "cross_entropy target range",
        lambda lib: F(lib).cross_entropy(lib.ones(2, 3), lib.tensor([0, 5])),
    ),
    (
        "cross_entropy batch",
        lambda lib: F(lib).cross_entropy(lib.ones(2, 3), lib.tensor([0, 1, 1])),
    ),
    (
        "cross_entropy reduction",
        lambda lib: F(lib).cross_entropy(lib.ones(2, 3), lib.tensor([0, 1]), reduction="avg"),
    ),
    (
        "cross_entropy label_smoothing",
        lambda lib: F(lib).cross_entropy(lib.ones(2, 3), lib.tensor([0, 1]), label_smoothing=2.0),
    ),
    ("nll_loss target range", lambda lib: F(lib).nll_loss(lib.ones(2, 3), lib.tensor([0, 5]))),
    ("nll_loss float target", lambda lib: F(lib).nll_loss(lib.ones(2, 3), lib.ones(2))),
    ("mse_loss shapes", lambda lib: F(lib).mse_loss(lib.ones(3), lib.ones(4))),
    ("mse_loss int", lambda lib: F(lib).mse_loss(i64(lib, 3), i64(lib, 3))),
    (
        "mse_loss reduction",
        lambda lib: F(lib).mse_loss(lib.ones(3), lib.ones(3), reduction="avg"),
    ),
    ("l1_loss shapes", lambda lib: F(lib).l1_loss(lib.ones(3), lib.ones(4))),
    (
        "smooth_l1_loss beta",
        lambda lib: F(lib).smooth_l1_loss(lib.ones(3), lib.ones(3), beta=-1.0),
    ),
    ("smooth_l1_loss int", lambda lib: F(lib).smooth_l1_loss(i64(lib, 3), i64(lib, 3))),
    ("huber_loss int", lambda lib: F(lib).huber_loss(i64(lib, 3), i64(lib, 3))),
    ("huber_loss delta", lambda lib: F(lib).huber_loss(lib.ones(3), lib.ones(3), delta=0.0)),
    (
        "binary_cross_entropy shapes",
        lambda lib: F(lib).binary_cross_entropy(lib.ones(3) * 0.5, lib.ones(4)),
    ),
    (
        "binary_cross_entropy target dtype",
        lambda lib: F(lib).binary_cross_entropy(lib.ones(3) * 0.5, i64(lib, 3)),
    ),
    (
        "bce_with_logits int",
        lambda lib: F(lib).binary_cross_entropy_with_logits(i64(lib, 3), lib.ones(3)),
    ),
    (
        "bce_with_logits shapes",
        lambda lib: F(lib).binary_cross_entropy_with_logits(lib.ones(3), lib.ones(4)),
    ),
    (
        "kl_div shapes",
        lambda lib: F(lib).kl_div(lib.ones(3), lib.ones(4), reduction="batchmean"),
    ),
]


def _raised(call, lib):
    try:
        call(lib)
    except Exception as e:  # the class is what is compared
        return e
    return None


def _builtin_bases(cls):
    return [c for c in cls.__mro__ if c.__module__ == "builtins"]


@pytest.fixture
def sync_execution():
    # Kernel errors (index ranges, singular matrices) then raise where the op is called.
    prev = flow._oneflow_internal.sync_execution()
    flow._oneflow_internal.set_sync_execution(True)
    yield
    flow._oneflow_internal.set_sync_execution(prev)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,call", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_call_raises_the_exception_type_of_torch(name, call, sync_execution):
    expected = _raised(call, torch)
    assert expected is not None, f"{name}: torch accepts this call; the table entry is wrong"
    got = _raised(call, flow)
    assert got is not None, f"{name}: oneflow accepts a call torch rejects with {expected!r}"
    want, have = type(expected), type(got)
    if want.__module__ == "builtins":
        assert have is want, f"{name}: oneflow raised {have.__name__}: {got}; torch {want.__name__}"
    else:  # a class of torch's own: torch.linalg.LinAlgError is torch._C._LinAlgError
        assert have.__name__ == want.__name__, f"{name}: {have.__name__}: {got}; torch {want}"
        assert _builtin_bases(have) == _builtin_bases(want), name
    assert str(got), f"{name}: an empty message"


def test_linalg_error_is_a_runtime_error_like_torch():
    assert issubclass(flow.linalg.LinAlgError, RuntimeError)
    assert flow.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    with pytest.raises(flow.linalg.LinAlgError, match="linalg.inv.*singular"):
        flow.linalg.inv(flow.tensor([[1.0, 2.0], [2.0, 4.0]])).numpy()
