"""Checks of user-supplied quantities: each failure names the input and the problem."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["InputError", "check_momentum", "check_positive", "check_finite", "check_int",
           "check_fraction"]


class InputError(ValueError):
    """A user-supplied value is invalid; the message names it and says why."""


def check_finite(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array, every element finite."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    # min and max reduce without temporaries; a NaN or an infinity shows in one of them
    if array.size and not (np.isfinite(array.min()) and np.isfinite(array.max())):
        raise InputError(f"{name} must be finite, got {value!r}")
    return array


def check_momentum(value: Any, name: str = "momentum") -> np.ndarray:
    """Momentum beta in [0, 1)."""
    array = check_finite(name, value)
    if np.any((array < 0) | (array >= 1)):
        raise InputError(f"{name} must lie in [0, 1), got {value!r}")
    return array


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> np.ndarray:
    """A finite positive (or non-negative) quantity."""
    array = check_finite(name, value)
    lowest = array.min() if array.size else 1.0
    if lowest < 0 or (lowest == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise InputError(f"{name} must be {kind}, got {value!r}")
    return array


def check_int(name: str, value: Any, *, minimum: int) -> int:
    """An integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        else:
            raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_fraction(name: str, value: Any) -> float:
    """A number strictly between 0 and 1."""
    array = check_finite(name, value)
    if array.ndim != 0 or not 0 < float(array) < 1:
        raise InputError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(array)
