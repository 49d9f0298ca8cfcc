"""The CPU FFT engine's paths, against NumPy's transforms computed in float64.

The engine (kernels/cpu/fft.cpp) picks its path by the length (radix 4, 2, 3 and 5 passes, a
generic pass for primes 7 to 61, Bluestein's algorithm above), by the number of lines (one line on
scalars with vector passes where 8 consecutive sub-transforms share twiddles, a long complex line
as the four-step transform; groups of 8 floats or 4 doubles as vector lanes, partial groups
padded), by the layout (lines as rows, through register
transposes; as adjacent columns; anything else lane by lane) and by the transform (complex, real
input of even length through a half-length complex transform, odd length directly, and the
inverse of each). Every case here compares the result with NumPy's, scaled by the largest
magnitude of the expected result. The file also runs in a process capped at the baseline vector
tier (ONEFLOW_CPU_CAPABILITY=default), whose passes are compiled separately.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import oneflow as flow

TOL = {np.float32: 3e-5, np.float64: 1e-12}
CTYPE = {np.float32: np.complex64, np.float64: np.complex128}

# Every length up to 70 (all radix mixes, the generic primes up to 61, Bluestein for 67),
# and longer ones: powers of two, mixed radices, large primes, composites of large primes.
LENGTHS = list(range(1, 71)) + [96, 100, 121, 127, 128, 243, 256, 375, 400, 512, 1000, 1009, 1024]
LONG = [2048, 4096 + 4, 3 * 127, 65536, 16000, 2 * 4999, 131072 + 3 * 2048]


def _complex(rng, shape, real):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(CTYPE[real])


def _check(got, want, real, what):
    got = np.asarray(got)
    scale = max(np.abs(want).max(), 1.0)
    err = np.abs(got - want).max() / scale if want.size else 0.0
    assert err < TOL[real], f"{what}: max error {err:.3g} (relative to {scale:.3g})"


def _run_all(x_c, x_r, n, axis, real, what):
    """fft, ifft, rfft, irfft (even and odd n) and the full fft of a real input along axis."""
    fc = flow.tensor(x_c)
    fr = flow.tensor(x_r)
    _check(
        flow.fft.fft(fc, dim=axis).numpy(),
        np.fft.fft(x_c.astype(np.complex128), axis=axis),
        real,
        f"fft {what}",
    )
    _check(
        flow.fft.ifft(fc, dim=axis).numpy(),
        np.fft.ifft(x_c.astype(np.complex128), axis=axis),
        real,
        f"ifft {what}",
    )
    _check(
        flow.fft.rfft(fr, dim=axis).numpy(),
        np.fft.rfft(x_r.astype(np.float64), axis=axis),
        real,
        f"rfft {what}",
    )
    _check(
        flow.fft.fft(fr, dim=axis).numpy(),
        np.fft.fft(x_r.astype(np.float64), axis=axis),
        real,
        f"fft of real {what}",
    )
    half = np.fft.rfft(x_r.astype(np.float64), axis=axis)
    _check(
        flow.fft.irfft(flow.tensor(half.astype(CTYPE[real])), n=n, dim=axis).numpy(),
        np.fft.irfft(half, n=n, axis=axis),
        real,
        f"irfft {what}",
    )


@pytest.mark.parametrize("real", [np.float32, np.float64])
@pytest.mark.parametrize("lines", [1, 3, 4, 8, 13])
def test_every_length_and_line_count(real, lines):
    rng = np.random.default_rng(lines)
    for n in LENGTHS:
        x_c = _complex(rng, (lines, n), real)
        x_r = rng.standard_normal((lines, n)).astype(real)
        _run_all(x_c, x_r, n, -1, real, f"{lines} lines of {n}")


@pytest.mark.parametrize("real", [np.float32, np.float64])
@pytest.mark.parametrize("lines", [1, 2, 9])
def test_long_lines(real, lines):
    rng = np.random.default_rng(7)
    for n in LONG:
        x_c = _complex(rng, (lines, n), real)
        x_r = rng.standard_normal((lines, n)).astype(real)
        _run_all(x_c, x_r, n, -1, real, f"{lines} lines of {n}")


@pytest.mark.parametrize("real", [np.float32, np.float64])
@pytest.mark.parametrize("inner", [1, 2, 3, 4, 8, 9, 16, 33])
@pytest.mark.parametrize("outer", [1, 3])
def test_lines_along_leading_and_middle_dims(real, inner, outer):
    # lines with stride `inner`: adjacent columns where a group fits in one outer slice,
    # lane by lane where it straddles two
    rng = np.random.default_rng(inner * 10 + outer)
    for n in [5, 8, 12, 67, 128]:
        shape = (outer, n, inner)
        x_c = _complex(rng, shape, real)
        x_r = rng.standard_normal(shape).astype(real)
        _run_all(x_c, x_r, n, 1, real, f"shape {shape} along dim 1")


@pytest.mark.parametrize("real", [np.float32, np.float64])
def test_long_lines_along_a_leading_dim(real):
    # longer than the vector groups take: line by line, stride 2
    rng = np.random.default_rng(8)
    x_c = _complex(rng, (70000, 2), real)
    x_r = rng.standard_normal((70000, 2)).astype(real)
    _run_all(x_c, x_r, 70000, 0, real, "(70000, 2) along dim 0")


@pytest.mark.parametrize("real", [np.float32, np.float64])
def test_multi_dim_and_threaded_batches(real):
    rng = np.random.default_rng(3)
    x = _complex(rng, (6, 40, 48), real)
    want = np.fft.fftn(x.astype(np.complex128), axes=(0, 1, 2))
    _check(flow.fft.fftn(flow.tensor(x)).numpy(), want, real, "fftn (6, 40, 48)")
    xr = rng.standard_normal((64, 512)).astype(real)  # enough work for every thread
    _check(
        flow.fft.rfft2(flow.tensor(xr)).numpy(),
        np.fft.rfft2(xr.astype(np.float64)),
        real,
        "rfft2 (64, 512)",
    )
    half = np.fft.rfft2(xr.astype(np.float64))
    _check(
        flow.fft.irfft2(flow.tensor(half.astype(CTYPE[real])), s=(64, 512)).numpy(),
        np.fft.irfft2(half, s=(64, 512)),
        real,
        "irfft2 (64, 512)",
    )


def test_irfft_ignores_the_imaginary_parts_of_the_real_bins():
    # entries 0 and n/2 of a real signal's spectrum are real: their imaginary parts are dropped
    rng = np.random.default_rng(11)
    for n in [8, 9, 64, 127, 128]:
        half = _complex(rng, (5, n // 2 + 1), np.float64)
        clean = half.copy()
        clean[:, 0] = clean[:, 0].real
        if n % 2 == 0:
            clean[:, -1] = clean[:, -1].real
        got = flow.fft.irfft(flow.tensor(half), n=n).numpy()
        _check(got, np.fft.irfft(clean, n=n), np.float64, f"irfft n={n}")


def test_many_lengths_in_turn_reuse_and_rebuild_plans():
    # more distinct lengths than the plan cache keeps: plans are rebuilt, results stay right
    rng = np.random.default_rng(5)
    for n in range(200, 300):
        x = _complex(rng, (2, n), np.float64)
        _check(flow.fft.fft(flow.tensor(x)).numpy(), np.fft.fft(x), np.float64, f"n={n}")


@pytest.mark.skipif(
    "ONEFLOW_CPU_CAPABILITY" in os.environ, reason="already running at a capped tier"
)
def test_baseline_tier_matches_numpy():
    env = dict(os.environ, ONEFLOW_CPU_CAPABILITY="default")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", __file__],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
