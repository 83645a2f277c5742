"""Fused kernels (numba), optional: the same formulas in one pass, no temporaries.

numba is an optional dependency (``pip install grpodyn[fast]``). Without it, or with
``GRPODYN_NO_NUMBA=1`` in the environment, or with :data:`ENABLED` set to False (tests do this),
every caller takes its numpy path; both give the same results to round-off (tested both ways).
numba is imported and the kernels compiled on first use only (compiled code is cached on disk),
and callers use them only for long arrays, so ``import grpodyn.numerics`` never pays for it.

Kernels
-------
- :func:`closed_form_kernel`: the oscillator's closed-form trajectory for scalar parameters
  (THEORY.md section 2; the regimes and formulas of :func:`grpodyn.numerics.trajectory.closed_form`).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import cache

import numpy as np

__all__ = ["ENABLED", "MIN_POINTS", "available", "closed_form_kernel"]

#: numba present and not switched off by GRPODYN_NO_NUMBA; tests monkeypatch it.
ENABLED: bool = (importlib.util.find_spec("numba") is not None
                 and os.environ.get("GRPODYN_NO_NUMBA", "") in ("", "0"))

#: Arrays shorter than this take the numpy path: the first call's compilation (about a second,
#: then cached on disk) is not worth it for a fit's 1e3 points.
MIN_POINTS = 20_000

_SERIES_CUTOFF = 0.05  # as numerics.trajectory: |s t|^2 below which the power series is used
_SERIES_TERMS = 12


def available(size: int) -> bool:
    """True when a fused kernel should evaluate an array of ``size`` points."""
    return ENABLED and size >= MIN_POINTS


def _closed_form_loop(t: np.ndarray, e0: float, slope: float, gamma: float, s2: float,
                      omega0: float, out: np.ndarray) -> None:  # pragma: no cover - numba
    """Fill ``out`` with e(t): series near |s t| = 0, else the regime's exponential form."""
    n = t.size
    s = np.sqrt(s2) if s2 > 0 else 0.0
    slow_rate = -omega0 * omega0 / (s + gamma) if s2 > 0 else 0.0
    fast_weight = slope / s if s2 > 0 else 0.0
    plus, minus = 0.5 * (e0 + fast_weight), 0.5 * (e0 - fast_weight)
    wd = np.sqrt(-s2) if s2 < 0 else 0.0
    slope_wd = slope / wd if s2 < 0 else 0.0
    for i in range(n):  # noqa: PLW2901 - numba prange is not needed on 2 cores
        ti = t[i]
        x = 0.0 if s2 == 0.0 else s2 * ti * ti
        if abs(x) <= _SERIES_CUTOFF:
            cosh_sum, sinc_sum, term_c, term_s = 0.0, 0.0, 1.0, 1.0
            for j in range(_SERIES_TERMS):
                cosh_sum += term_c
                sinc_sum += term_s
                term_c = term_c * x / ((2 * j + 1) * (2 * j + 2))
                term_s = term_s * x / ((2 * j + 2) * (2 * j + 3))
            out[i] = np.exp(-gamma * ti) * (e0 * cosh_sum + slope * ti * sinc_sum)
        elif s2 > 0:
            out[i] = np.exp(ti * slow_rate) * (np.exp(ti * (-2.0 * s)) * minus + plus)
        else:
            phase = ti * wd
            out[i] = (np.cos(phase) * e0 + np.sin(phase) * slope_wd) * np.exp(ti * -gamma)


@cache
def _compiled_closed_form() -> Callable[..., None]:
    import numba

    return numba.njit(cache=True, nogil=True, error_model="numpy")(_closed_form_loop)


def closed_form_kernel(t: np.ndarray, e0: float, v0: float, zeta: float, omega0: float
                       ) -> np.ndarray:
    """The closed-form trajectory e(t) for scalar parameters, by one fused loop (numba).

    Parameters
    ----------
    t : numpy.ndarray
        Times [steps], >= 0 (not checked: callers validate).
    e0, v0 : float
        Initial displacement [reward] and velocity [reward/step].
    zeta, omega0 : float
        Damping ratio and natural angular frequency [rad/step], both > 0.

    Returns
    -------
    numpy.ndarray
        e(t) with the shape of t; THEORY.md section 2, derivation ``trajectory``.
    """
    flat = np.ascontiguousarray(t, dtype=float).reshape(-1)
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1.0) * (zeta + 1.0)
    out = np.empty_like(flat)
    _compiled_closed_form()(flat, float(e0), float(v0 + gamma * e0), float(gamma), float(s2),
                            float(omega0), out)
    return out.reshape(np.shape(t))
