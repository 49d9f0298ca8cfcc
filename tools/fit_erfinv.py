"""Fits the AVX-512 erfinv kernel's table (kErfinvRows in kernels/cpu/vec/erf_coeffs.h).

Entry 0: erfinv(b) / b as a polynomial in s = b^2, |b| <= 1/2. Entries 1..30: erfinv(1 - q) for
q = 1 - |b| in [2^e, 2^(e+1)), e = -2 .. -16, each binade split at mantissa 1.5, as a polynomial
in v = 4 m - 5 (m < 1.5) or 4 m - 7, q = m 2^e. Entry 31 repeats entry 30 (unused). Degree 8:
the seven highest coefficients are rounded to float; the two lowest are kept as float pairs
(hi + lo). Least squares for the relative error on Chebyshev nodes against 40-digit values.
Prints the rows (highest power first, one column per entry) and the largest relative error of
each entry's polynomial as stored (its coefficients rounded), evaluated exactly.

    python tools/fit_erfinv.py
"""

import mpmath as mp
import numpy as np

mp.mp.dps = 40
DEGREE = 8


def fit(f, lo, hi, raw, nodes=160):
    # raw: the polynomial's variable is x itself (central) rather than x mapped onto [-1, 1]
    def points(n, cheb=True):
        u = np.cos(np.pi * (np.arange(n) + 0.5) / n) if cheb else np.linspace(-1, 1, n)
        xs = [mp.mpf(lo) + (mp.mpf(hi) - lo) * (mp.mpf(x) + 1) / 2 for x in u]
        var = np.array([float(x) for x in xs]) if raw else u
        return var, np.array([float(f(x)) for x in xs]), xs

    var, fv, _ = points(nodes)
    coeffs, *_ = np.linalg.lstsq(
        np.vander(var, DEGREE + 1) / fv[:, None], np.ones(nodes), rcond=None
    )
    high = coeffs[:-2].astype(np.float32)
    pairs = []
    for c in coeffs[-2:]:
        h = np.float32(c)
        pairs += [h, np.float32(c - np.float64(h))]
    stored = [mp.mpf(float(c)) for c in high] + [
        mp.mpf(float(pairs[0])) + float(pairs[1]),
        mp.mpf(float(pairs[2])) + float(pairs[3]),
    ]
    var_t, _, xs_t = points(1001, cheb=False)
    err = 0
    for v, x in zip(var_t, xs_t):
        p = mp.mpf(0)
        for c in stored:
            p = p * mp.mpf(float(v)) + c
        err = max(err, abs(p / f(x) - 1))
    return list(high) + pairs, float(err)


def central(s):
    return mp.erfinv(mp.sqrt(s)) / mp.sqrt(s) if s > 0 else mp.sqrt(mp.pi) / 2


def main():
    entries = [fit(central, 0, 0.25, raw=True)]
    for e in range(2, 17):
        for half in (0, 1):
            lo = 2.0**-e * (1 + 0.5 * half)
            entries.append(fit(lambda q: mp.erfinv(1 - q), lo, lo + 2.0**-e * 0.5, raw=False))
    entries.append(entries[-1])
    print("// largest relative errors:", " ".join(f"{err:.1e}" for _, err in entries[:31]))
    print("alignas(64) constexpr float kErfinvRows[][32] = {")
    for row in range(DEGREE + 3):
        print("    {" + ", ".join(f"{float(c[row]):.9g}f" for c, _ in entries) + "},")
    print("};")


if __name__ == "__main__":
    main()
