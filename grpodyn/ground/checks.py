"""Check user-supplied quantities: each failure names the input and the problem."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["InputError", "TooFewPoints", "MOMENTUM_MAX", "REWARD_MAGNITUDE_MAX",
           "STEP_MAGNITUDE_MAX", "LR_MAX", "BATCH_MAX", "MAX_STEPS", "GROUP_SIZE_MAX",
           "check_momentum", "check_group_size",
           "check_positive", "check_finite", "check_series", "check_int", "check_fraction",
           "check_reward_range", "check_flag", "one_of_alias"]


class InputError(ValueError):
    """A user-supplied value is invalid; the message names it and says why."""


class TooFewPoints(InputError):
    """A series holds fewer points than an analysis needs; the message says how many of each.

    Its own type so that a caller that knows where the points went (records a loader merged on
    shared steps, a prefix cut by ``--until``) can add that to the message without reading it.
    """


def check_finite(name: str, value: Any, *, scalar: bool = False) -> np.ndarray:
    """Return ``value`` as a float array after checking that every element is a finite number.

    Text, booleans and None are refused rather than converted: ``"0.01"`` or ``True`` in place
    of a number is a mistake of the caller, which numpy would otherwise turn into 0.01 or 1.0.

    Parameters
    ----------
    name : str
        The input's name, used in the error message.
    value : Any
        A number or an array-like of numbers (Python or numpy).
    scalar : bool
        Accept a single number only: a quantity that is one number (a learning rate), which an
        array would reach later as a TypeError far from the input.

    Returns
    -------
    numpy.ndarray
        ``value`` as floats (0-d for a scalar).

    Raises
    ------
    InputError
        When ``value`` is not numeric, is an array where a number is needed, or holds a NaN or
        an infinity.
    """
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        got = "None" if value is None else f"a {type(value).__name__} ({value!r})"
        raise InputError(f"{name} must be a number, got {got}")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "USVb" or (raw.dtype.kind == "O" and any(
                isinstance(v, (str, bytes, bool)) or v is None for v in raw.flat)):
            raise TypeError(raw.dtype)
        array = raw.astype(float, copy=False)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if scalar and array.ndim:
        raise InputError(f"{name} must be a number, got an array of {array.size} value"
                         f"{'' if array.size == 1 else 's'}")
    # min and max reduce without temporaries; a NaN or an infinity shows in one of them
    if array.size and not (np.isfinite(array.min()) and np.isfinite(array.max())):
        raise InputError(f"{name} must be finite, got {value!r}")
    return array


#: The largest momentum the stability formulas resolve. The closed forms of the refresh
#: interval's Jury conditions and of the discrete critical stiffness (docs/theory.md sections 4
#: and 5) expand (1 - beta)^2 as 1 - 2 beta + beta^2, whose rounding error, about
#: 2.2e-16 / (1 - beta)^2 relative, must stay far below stability margins of order 1 - beta.
#: Against the spectral radius of the refresh cycle they misjudge stable and unstable maps from
#: 1 - beta = 3e-4 on, and divide by zero at 1e-9; up to 0.999 they agree everywhere on a grid
#: of k (0.01 k_c to 3.9) and K (1 to 3e4), with the critical stiffness to 3e-10 relative.
MOMENTUM_MAX = 0.999

#: The largest reward magnitude the analyses take (the command line refuses a log beyond it, the
#: live monitor skips such a reward): the fits square the reward and its differences and solve
#: linear programmes in its units, which lose all precision (1e20) or overflow (1e155) far beyond
#: any reward a trainer logs.
REWARD_MAGNITUDE_MAX = 1e12
#: The largest logged step the analyses take: a count of optimizer steps (or of samples, tokens)
#: far beyond this is a corrupt record, and the fits' time constants overflow on it (a step of
#: 1e200 raised an OverflowError in a fit, 1e308 a failed SVD).
STEP_MAGNITUDE_MAX = 1e12
#: The largest learning rate and batch B a run's settings take: far beyond any run (the bandit
#: labs' SGD rates reach 30), where a sweep's joint fit overflows (lr 1e100) or a count no longer
#: fits an integer array (batch 1e20).
LR_MAX, BATCH_MAX = 1e6, 10**7
#: The most steps a path is iterated over: a prediction, a simulation or a transfer asked for,
#: and the span of a sweep run (the joint fit iterates the map over every step between its
#: first and last logged points, whatever their number); a longer one would run for hours.
MAX_STEPS = 100_000
#: The largest group size G: 2^16 completions per prompt, far beyond any GRPO group. The finite-G
#: statistics cost memory and time in proportion to G (a diagnosis at this G takes about two
#: seconds), so a larger G is refused rather than left to exhaust the machine.
GROUP_SIZE_MAX = 65536


def check_series(name: str, value: Any) -> np.ndarray:
    """Return a series (steps, rewards) as a one-dimensional float array of finite numbers.

    As :func:`check_finite`; a single number is a series of one, and a column or a row (an
    (n, 1) or (1, n) array, a one-column DataFrame) is read as the series it holds. A table of
    several rows and columns is refused rather than read row after row as one series.

    Parameters
    ----------
    name : str
        The input's name, used in the error message.
    value : Any
        A number or an array-like of numbers.

    Returns
    -------
    numpy.ndarray
        ``value`` as a one-dimensional float array.

    Raises
    ------
    InputError
        As :func:`check_finite`, and when ``value`` has more than one axis longer than 1.
    """
    array = check_finite(name, value)
    if sum(n > 1 for n in array.shape) > 1:
        raise InputError(f"{name} must be one-dimensional, got an array of shape {array.shape}")
    return array.ravel()


def check_momentum(value: Any, name: str = "momentum", *,
                   largest: float | None = MOMENTUM_MAX, scalar: bool = False) -> np.ndarray:
    """Return the momentum beta as a float array after checking it lies in [0, ``largest``].

    Parameters
    ----------
    value : Any
        The momentum (docs/theory.md section 1: beta), a number or an array-like.
    name : str
        The input's name, used in the error message.
    largest : float or None
        The largest accepted value: :data:`MOMENTUM_MAX`, beyond which the stability formulas'
        expansion of (1 - beta)^2 as 1 - 2 beta + beta^2 rounds away the margins they decide
        on; None accepts any value below 1 (Adam's beta2, which enters none of them).
    scalar : bool
        Accept a single number only (:func:`check_finite`).

    Returns
    -------
    numpy.ndarray
        ``value`` as floats.

    Raises
    ------
    InputError
        When ``value`` is not a number (or, with ``scalar``, is an array), is not finite, lies
        outside [0, 1), or is above ``largest``.
    """
    array = check_finite(name, value, scalar=scalar)
    if np.any((array < 0) | (array >= 1)):
        raise InputError(f"{name} must lie in [0, 1), got {value!r}")
    if largest is not None and np.any(array > largest):
        raise InputError(f"{name} must be at most {largest:g}, got {value!r}: closer to 1 the "
                         "stability formulas cannot resolve 1 - beta in floating point")
    return array


def check_positive(name: str, value: Any, *, allow_zero: bool = False,
                   scalar: bool = False) -> np.ndarray:
    """Return a finite positive (or, with ``allow_zero``, non-negative) quantity as floats.

    Parameters
    ----------
    name : str
        The input's name, used in the error message.
    value : Any
        A number or an array-like of numbers.
    allow_zero : bool
        Accept zero as well.
    scalar : bool
        Accept a single number only (:func:`check_finite`).

    Returns
    -------
    numpy.ndarray
        ``value`` as floats.

    Raises
    ------
    InputError
        When ``value`` is not a number (or, with ``scalar``, is an array), or a value is not
        finite, negative, or zero without ``allow_zero``.
    """
    array = check_finite(name, value, scalar=scalar)
    lowest = array.min() if array.size else 1.0
    if lowest < 0 or (lowest == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise InputError(f"{name} must be {kind}, got {value!r}")
    return array


def check_int(name: str, value: Any, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer in [``minimum``, ``maximum``].

    Parameters
    ----------
    name : str
        The input's name, used in the error message.
    value : Any
        An int, a numpy integer, or a float with an integer value.
    minimum : int
        The smallest accepted value.
    maximum : int, optional
        The largest accepted value (None: no bound), where a size beyond it would only cost
        memory or time.

    Returns
    -------
    int
        ``value`` as a plain int.

    Raises
    ------
    InputError
        When ``value`` is not an integer (booleans are refused) or lies outside the bounds.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        else:
            raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be <= {maximum}, got {value!r}")
    return int(value)


def check_group_size(group_size: Any, name: str = "group_size") -> int:
    """Return the group size G as an int in [2, ``GROUP_SIZE_MAX``], or refuse it by ``name``.

    A group of one has no spread by construction (its advantage is zero); a G beyond
    ``GROUP_SIZE_MAX`` would only cost memory and time.
    """
    return check_int(name, group_size, minimum=2, maximum=GROUP_SIZE_MAX)


def check_fraction(name: str, value: Any) -> float:
    """Return a scalar after checking it lies strictly between 0 and 1.

    Parameters
    ----------
    name : str
        The input's name, used in the error message.
    value : Any
        A number.

    Returns
    -------
    float
        ``value`` as a plain float.

    Raises
    ------
    InputError
        When ``value`` is not a finite scalar in (0, 1).
    """
    array = check_finite(name, value)
    if array.ndim != 0 or not 0 < float(array) < 1:
        raise InputError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(array)


def check_flag(name: str, value: Any) -> bool:
    """Return a switch after checking it is True or False (the string "no" is truthy).

    Raises
    ------
    InputError
        When ``value`` is not a bool (numpy's included).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r:.60}")
    return bool(value)


def check_reward_range(value: Any, name: str = "reward_range") -> tuple[float, float]:
    """Return the range a reward can reach as ``(low, high)`` after checking it.

    Parameters
    ----------
    value : Any
        Two finite numbers, low < high (reward units).
    name : str
        The input's name, used in the error message.

    Returns
    -------
    tuple of float
        ``(low, high)`` as plain floats.

    Raises
    ------
    InputError
        When ``value`` is text, not two finite numbers, or not low < high.
    """
    if isinstance(value, (str, bytes)):
        raise InputError(f"{name}: expected (low, high), two numbers, got the text {value!r:.40}")
    try:
        bounds = check_finite(name, value)
    except InputError:
        raise InputError(f"{name}: expected (low, high), two finite numbers, got "
                         f"{value!r:.60}") from None
    if bounds.shape != (2,) or not bounds[0] < bounds[1]:
        raise InputError(f"{name}: expected (low, high) with low < high, got {value!r:.60}")
    return float(bounds[0]), float(bounds[1])


def one_of_alias(name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """Return the value given under a public name or under its older alias.

    The public vocabulary (``plateau``) replaced some older names (``r_star``); both are accepted
    where callers may still use the old one.

    Parameters
    ----------
    name, alias : str
        The public name and the old one, used in the error message.
    value, alias_value : Any
        What was passed under each (None: not given).

    Returns
    -------
    Any
        The value given, or None when neither was.

    Raises
    ------
    InputError
        When both are given (unless as the same object): arrays and NaN have no equality that
        could say they agree.
    """
    if value is not None and alias_value is not None and value is not alias_value:
        raise InputError(f"give {name} or its alias {alias}, not both")
    return value if value is not None else alias_value
