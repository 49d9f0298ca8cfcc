"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch with the same weights: output, loss and
gradients (batched and one sample), log_prob, predict, errors."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(head_bias):
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(
        16, 30, [5, 12, 20], div_value=2.0, head_bias=head_bias
    )
    fm = flow.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12, 20], div_value=2.0, head_bias=head_bias)
    assert list(fm.state_dict()) == list(tm.state_dict())
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return fm, tm


@pytest.mark.parametrize("head_bias", [False, True])
def test_output_loss_and_gradients_like_torch(head_bias):
    fm, tm = _pair(head_bias)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 16)).astype(np.float32)
    y = np.array([0, 4, 5, 11, 12, 19, 20, 29, 3, 7, 25, 13])
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, to = fm(fx, flow.tensor(y)), tm(tx, torch.tensor(y))
    np.testing.assert_allclose(
        fo.output.detach().numpy(), to.output.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(fo.loss.item(), to.loss.item(), rtol=1e-5)
    fo.loss.backward()
    to.loss.backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    tp = dict(tm.named_parameters())
    for n, p in fm.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), tp[n].grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=n
        )
    # one sample, a 0-d target
    f1, t1 = fm(flow.tensor(x[3]), flow.tensor(y[3])), tm(torch.tensor(x[3]), torch.tensor(y[3]))
    assert tuple(f1.output.shape) == tuple(t1.output.shape) == ()
    np.testing.assert_allclose(f1.loss.item(), t1.loss.item(), rtol=1e-5)
    # log_prob and predict
    np.testing.assert_allclose(
        fm.log_prob(flow.tensor(x)).detach().numpy(),
        tm.log_prob(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    # one sample (PyTorch's log_prob takes batches only)
    np.testing.assert_allclose(
        fm.log_prob(flow.tensor(x[0])).detach().numpy(),
        tm.log_prob(torch.tensor(x[:1])).detach().numpy()[0],
        rtol=1e-5,
        atol=1e-6,
    )
    for scale in (1.0, 10.0):
        xs = x * scale
        np.testing.assert_array_equal(
            fm.predict(flow.tensor(xs)).numpy(), tm.predict(torch.tensor(xs)).numpy()
        )


def test_errors_like_torch():
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        flow.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        flow.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [0, 3])
    m = flow.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 6])
    with pytest.raises(RuntimeError, match="Target values should be in"):
        m(flow.randn(2, 4), flow.tensor([1, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(flow.randn(3, 4), flow.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(flow.randn(3, 4), flow.tensor([[1, 2]]))
