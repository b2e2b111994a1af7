"""erf / erfinv / gamma / gammaln without a SciPy dependency (SciPy is used when installed)."""
from __future__ import annotations

import math

import numpy as np

try:  # pragma: no cover - depends on the environment
    from scipy import special as _sp
except Exception:  # noqa: BLE001
    _sp = None


def _erf_np(x):
    # W. J. Cody's rational approximations via float64; |err| < 1e-12 in practice is not needed:
    # use the complementary error function continued with a high-order polynomial (Numerical
    # Recipes erfc, fractional error < 1.2e-7), evaluated in float64.
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.5 * z)
    r = t * np.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (
        0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (
            1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return np.where(x >= 0, 1.0 - r, r - 1.0)


def erf(x):
    if _sp is not None:
        return _sp.erf(x)
    return _erf_np(x).astype(x.dtype)


def erfinv(x):
    if _sp is not None:
        return _sp.erfinv(x)
    # Giles' single-precision approximation, refined by two Newton steps in float64
    xd = x.astype(np.float64)
    w = -np.log((1.0 - xd) * (1.0 + xd))
    small = w < 5.0
    ws = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wl
    y = np.where(small, p1, p2) * xd
    for _ in range(2):
        err = _erf_np(y) - xd
        y = y - err / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
    y = np.where(np.abs(xd) == 1.0, np.sign(xd) * np.inf, y)
    return y.astype(x.dtype)


_lgamma = np.frompyfunc(math.lgamma, 1, 1)
_gamma = np.frompyfunc(math.gamma, 1, 1)


def gammaln(x):
    if _sp is not None:
        return _sp.gammaln(x)
    return _lgamma(x.astype(np.float64)).astype(x.dtype)


def gamma(x):
    if _sp is not None:
        return _sp.gamma(x)
    with np.errstate(all="ignore"):
        f = np.frompyfunc(lambda v: math.gamma(v) if v > 0 or v != int(v) else math.inf, 1, 1)
        return f(x.astype(np.float64)).astype(x.dtype)
