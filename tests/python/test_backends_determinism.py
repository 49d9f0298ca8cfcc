"""torch.backends' switches and the global numerics settings against PyTorch:
set/get_float32_matmul_precision (and backends.cuda.matmul.allow_tf32, its other view),
use_deterministic_algorithms and the debug mode, cudnn/mkldnn flags(), availability facts;
deterministic mode leaves CPU kernels running; on CUDA (GPU only) it refuses the atomic-add
kernels and "high" precision runs float32 products on TF32 tensor cores."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


@pytest.fixture(autouse=True)
def _restore_settings():
    saved = (
        flow.get_float32_matmul_precision(),
        flow.get_deterministic_debug_mode(),
        torch.get_float32_matmul_precision(),
        torch.get_deterministic_debug_mode(),
    )
    yield
    flow.set_float32_matmul_precision(saved[0])
    flow.set_deterministic_debug_mode(saved[1])
    torch.set_float32_matmul_precision(saved[2])
    torch.set_deterministic_debug_mode(saved[3])


def _both(fn):
    out = []
    for lib in (torch, flow):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out.append((fn(lib), None, len(w)))
            except (RuntimeError, TypeError) as e:
                out.append((None, type(e), len(w)))
    return out


def test_float32_matmul_precision_like_torch():
    for lib in (torch, flow):
        assert lib.get_float32_matmul_precision() == "highest"
        assert lib.backends.cuda.matmul.allow_tf32 is False
    steps = [
        lambda lib: lib.set_float32_matmul_precision("high"),
        lambda lib: lib.set_float32_matmul_precision("medium"),
        lambda lib: lib.set_float32_matmul_precision("low"),  # warns, no effect
        lambda lib: lib.set_float32_matmul_precision(3),
        lambda lib: lib.set_float32_matmul_precision("highest"),
    ]
    for step in steps:
        (_, terr, tw), (_, ferr, fw) = _both(step)
        assert terr == ferr and tw == fw
        states = [
            (lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32)
            for lib in (torch, flow)
        ]
        assert states[0] == states[1], states
    # The legacy switch is a view of the same setting (PyTorch 2.13 refuses to report the
    # precision once both APIs were used, so this part is checked on oneflow alone).
    flow.backends.cuda.matmul.allow_tf32 = True
    assert flow.get_float32_matmul_precision() == "high"
    flow.set_float32_matmul_precision("medium")
    assert flow.backends.cuda.matmul.allow_tf32 is True
    flow.backends.cuda.matmul.allow_tf32 = False
    assert flow.get_float32_matmul_precision() == "highest"


def test_cuda_matmul_switches_like_torch():
    m = flow.backends.cuda.matmul
    assert m.allow_fp16_reduced_precision_reduction is True
    m.allow_bf16_reduced_precision_reduction = False
    assert m.allow_bf16_reduced_precision_reduction is False
    m.allow_bf16_reduced_precision_reduction = True
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = 1
    with pytest.raises(AttributeError, match="Unknown attribute bar"):
        _ = m.bar
    assert flow.backends.cuda.is_built() == bool(flow._oneflow_internal.with_cuda)
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        assert getattr(flow.backends.cuda, f"{name}_sdp_enabled")() is True
    flow.backends.cuda.enable_flash_sdp(False)
    assert not flow.backends.cuda.flash_sdp_enabled()
    flow.backends.cuda.enable_flash_sdp(True)
    with flow.backends.cuda.sdp_kernel(enable_math=False):
        assert not flow.backends.cuda.math_sdp_enabled()
    assert flow.backends.cuda.math_sdp_enabled()


def test_deterministic_modes_like_torch():
    steps = [
        lambda lib: lib.use_deterministic_algorithms(True),
        lambda lib: lib.use_deterministic_algorithms(True, warn_only=True),
        lambda lib: lib.use_deterministic_algorithms(False),
        lambda lib: lib.use_deterministic_algorithms(1),
        lambda lib: lib.set_deterministic_debug_mode("warn"),
        lambda lib: lib.set_deterministic_debug_mode("error"),
        lambda lib: lib.set_deterministic_debug_mode(0),
        lambda lib: lib.set_deterministic_debug_mode(2),
        lambda lib: lib.set_deterministic_debug_mode("bad"),
        lambda lib: lib.set_deterministic_debug_mode(5),
        lambda lib: lib.set_deterministic_debug_mode(1),
    ]
    for step in steps:
        (_, terr, _), (_, ferr, _) = _both(step)
        assert terr == ferr
        states = [
            (
                lib.are_deterministic_algorithms_enabled(),
                lib.is_deterministic_algorithms_warn_only_enabled(),
                lib.get_deterministic_debug_mode(),
            )
            for lib in (torch, flow)
        ]
        assert states[0] == states[1], states


def test_cpu_kernels_run_in_deterministic_mode_and_repeat_bit_for_bit():
    flow.use_deterministic_algorithms(True)
    rng = np.random.default_rng(0)
    idx = flow.tensor(rng.integers(0, 50, 10000))
    vals = flow.tensor(rng.standard_normal(10000).astype(np.float32))
    x = flow.tensor(rng.standard_normal((8, 3, 17, 17)).astype(np.float32), requires_grad=True)
    results = []
    for _ in range(2):
        acc = flow.zeros(50).index_put_((idx,), vals, accumulate=True)
        y = flow.nn.functional.pad(x, (2, 2, 2, 2), mode="reflect")
        (g,) = flow.autograd.grad((y * y).sum(), [x])
        results.append((acc.numpy(), g.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")
def test_cudnn_mkldnn_flags_and_availability_like_torch():
    for lib in (torch, flow):
        b = lib.backends
        assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == (
            True,
            False,
            False,
            True,
        )
        b.cudnn.benchmark = True
        b.cudnn.deterministic = True
        with b.cudnn.flags(enabled=False, benchmark=False):
            assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic) == (
                False,
                False,
                False,
            )
        assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic) == (True, True, True)
        b.cudnn.benchmark = False
        b.cudnn.deterministic = False
        with b.mkldnn.flags(enabled=False):
            assert b.mkldnn.enabled is False
        assert b.mkldnn.enabled is True
        assert b.mps.is_available() is False and b.mps.is_built() is False
        assert b.mkldnn.is_available() is True and b.openmp.is_available() is True
    # oneflow has no cuDNN kernels and no MKL (PyTorch's CPU build has MKL).
    assert flow.backends.cudnn.is_available() is False and flow.backends.cudnn.version() is None
    assert flow.backends.mkl.is_available() is False


def test_typical_seed_boilerplate_runs():
    # The lines at the top of many PyTorch training scripts.
    flow.manual_seed(0)
    flow.backends.cudnn.benchmark = False
    flow.backends.cudnn.deterministic = True
    flow.backends.cuda.matmul.allow_tf32 = True
    flow.backends.cudnn.allow_tf32 = True
    flow.use_deterministic_algorithms(True, warn_only=True)
    device = (
        "cuda" if flow.cuda.is_available() else "mps" if flow.backends.mps.is_available() else "cpu"
    )
    a = flow.ones(4, 4, device=device)
    assert (a @ a).sum().item() == 64
    flow.backends.cudnn.deterministic = False


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_deterministic_mode_refuses_atomic_kernels():
    dev = "cuda"
    idx = flow.tensor([0, 1, 0, 1], device=dev)
    vals = flow.ones(4, device=dev)
    flow.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="deterministic implementation"):
        flow.zeros(2, device=dev).index_put_((idx,), vals, accumulate=True)
        flow.cuda.synchronize()
    # Integer accumulation is exact: allowed.
    got = flow.zeros(2, dtype=flow.int64, device=dev).index_put_(
        (idx,), vals.to(flow.int64), accumulate=True
    )
    assert got.tolist() == [2, 2]
    flow.use_deterministic_algorithms(True, warn_only=True)
    got = flow.zeros(2, device=dev).index_put_((idx,), vals, accumulate=True)
    assert got.tolist() == [2.0, 2.0]
    # The gradient of a gather (embeddings, x[idx]) warns in both modes (PyTorch runs it
    # deterministically; refusing it would stop every embedding model from training).
    flow.use_deterministic_algorithms(True)
    w = flow.ones(3, 2, device=dev, requires_grad=True)
    w[idx].sum().backward()
    assert w.grad.tolist() == [[2.0, 2.0], [2.0, 2.0], [0.0, 0.0]]


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_float32_products_use_tf32_below_highest():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    x, y = flow.tensor(a, device="cuda"), flow.tensor(b, device="cuda")
    errors = {}
    for p in ("highest", "high", "medium"):
        flow.set_float32_matmul_precision(p)
        errors[p] = np.abs((x @ y).cpu().numpy() - exact).max()
    assert errors["highest"] < 1e-3 < errors["high"] < errors["medium"]


def test_detect_anomaly_names_the_function_that_returned_nan_like_torch():
    for lib in (torch, flow):
        x = lib.tensor([-1.0, 4.0], requires_grad=True)
        y = (x.sqrt() * 2).sum()
        y.backward(retain_graph=True)  # off: NaN gradients pass
        assert np.isnan(x.grad.numpy()[0])
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            with lib.autograd.detect_anomaly():
                assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
                with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                    y.backward(retain_graph=True)
        assert not lib.is_anomaly_enabled()
        with pytest.warns(UserWarning):
            with lib.autograd.detect_anomaly(check_nan=False):
                assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
                y.backward(retain_graph=True)
        # set_detect_anomaly: at once as a call, restored as a context manager.
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(False):
            assert not lib.is_anomaly_enabled()
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()
        # Finite gradients pass in anomaly mode.
        z = lib.tensor([1.0, 4.0], requires_grad=True)
        with lib.autograd.set_detect_anomaly(True):
            (z.sqrt() * 2).sum().backward()
        np.testing.assert_allclose(z.grad.numpy(), [1.0, 0.5])
