"""Exact discrete stability of the mean-field map: regimes, thresholds and grids.

On-policy the boundaries are closed forms (derivations ``critical_stiffness_discrete``,
``flip_stiffness``, ``stiffness_max``). With a fixed staleness d the characteristic polynomial
z^(d+1) - (1+beta) z^d + beta z^(d-1) + k is tested with a numeric Schur-Cohn recursion, O(d^2),
exact up to rounding; its limits (the largest stable k at a lag d, the largest stable d at a k)
come from the frequency at which a root crosses the unit circle, in O(1). With a refresh
interval K the compiled Jury conditions of the monodromy matrix are evaluated directly,
vectorised over grids.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from grpodyn.ground import InputError, check_int, check_momentum, check_positive

from .compiled import compiled

__all__ = ["REGIMES", "STALENESS_MAX", "REFRESH_MAX", "STALENESS_SEARCH_CAP",
           "REFRESH_SEARCH_CAP", "BeyondCap", "check_staleness", "check_stiffness", "regime",
           "schur_stable",
           "staleness_stable", "staleness_stiffness_max", "staleness_max", "refresh_stable",
           "refresh_stiffness_max",
           "refresh_max", "first_unstable_refresh",
           "stability_map", "regime_map", "refresh_threshold_comparison",
           "mixed_refresh_radius", "first_unstable_mixed_refresh", "refresh_cycle_steps",
           "beyond_float_range"]

REGIMES = ("overdamped", "critical", "oscillatory", "flip", "unstable")
_CRITICAL_TOLERANCE = 1e-9  # relative distance from the boundary reported as "critical"
_MARGINAL_TOLERANCE = 1e-10  # spectral radius this close to 1 is marginal, i.e. not stable
#: The largest fixed staleness d the stability analysis takes (:func:`check_staleness`, the
#: command line and :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap` alike): the poles of
#: the degree d + 1 polynomial (regime, decay time) and the stationary variance's Lyapunov
#: equation cost O(d^3), a tenth of a second at d = 200 but minutes at d = 5000, and no
#: asynchronous trainer lags its policy that far.
STALENESS_MAX = 200
#: The largest refresh interval K the stability analysis takes: the lr advised at a K beyond
#: it is so small that the largest stable staleness there exceeds the cap of
#: :func:`staleness_max`, and a policy held for 10,000 steps is no GRPO run.
REFRESH_MAX = 10_000
#: The largest staleness :func:`staleness_max` searches: a map stable beyond it has a relaxation
#: time of order 10^5 steps, longer than any run, so its exact lag limit has no use.
STALENESS_SEARCH_CAP = 100_000
#: The largest refresh interval :func:`first_unstable_refresh` searches, for the same reason.
REFRESH_SEARCH_CAP = 10_000_000


class BeyondCap(InputError):
    """The map stays stable at every lag up to the search cap: the lag limit lies beyond it.

    Distinct from a limit of None (the map is unstable at once, without a lag): a small
    stiffness is a valid input whose lag limit is merely too large to search. An
    :class:`~grpodyn.ground.InputError` for the callers that treat any refusal alike.

    Parameters
    ----------
    message : str
        What stays stable, and up to which cap.
    cap : int
        The largest lag searched.
    """

    def __init__(self, message: str, cap: int) -> None:
        super().__init__(message)
        self.cap = cap


def check_staleness(staleness: int, name: str = "staleness") -> int:
    """Return a fixed staleness d >= 0 [steps], refused beyond :data:`STALENESS_MAX`.

    Parameters
    ----------
    staleness : int
        The lag d [steps].
    name : str
        The parameter's name in the message (``--staleness`` on the command line).

    Returns
    -------
    int
        d.

    Raises
    ------
    InputError
        When d is not an integer >= 0, or exceeds the cap, naming ``name`` and the cap.
    """
    d = check_int(name, staleness, minimum=0)
    if d > STALENESS_MAX:
        raise InputError(f"{name} {d}: at most {STALENESS_MAX} (the poles of the map's degree "
                         "d + 1 polynomial cost d^3; no asynchronous trainer lags that far)")
    return d


def check_stiffness(stiffness: float, source: str) -> float:
    """Return a stiffness k [1/step^2] refused outside the normal floats.

    A subnormal k has lost its digits, and the relaxation time c / k overflows; an infinite k
    has no map (docs/theory.md section 1).

    Parameters
    ----------
    stiffness : float
        k [1/step^2].
    source : str
        What gave k, for the message (e.g. ``"lr 1e-320 times kappa 1"``).

    Returns
    -------
    float
        k.

    Raises
    ------
    InputError
        When k is not in [tiny, max] of the double floats.
    """
    k = float(stiffness)
    info = np.finfo(float)
    if not info.tiny <= k < np.inf:
        raise InputError(f"{source} gives the stiffness {k:.3g}, outside the normal floats "
                         f"[{info.tiny:.3g}, {info.max:.3g}] the map's constants are computed in")
    return k


def regime(*, momentum: float, stiffness: float, refresh: int = 1, staleness: int = 0) -> str:
    """Name the dynamical regime of the exact discrete map.

    On-policy the boundaries are the exact discrete ones of docs/theory.md section 4; with a lag the
    regime is that of the dominant eigenvalue (per step, or per refresh cycle), and ``unstable``
    when it leaves the unit disc.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k = a * kappa [1/step^2], > 0.
    refresh : int
        Refresh interval K >= 1 [steps] (sample-and-hold; docs/theory.md section 5).
    staleness : int
        Fixed staleness d in [0, :data:`STALENESS_MAX`] [steps] (docs/theory.md section 5); not
        with a refresh interval.

    Returns
    -------
    str
        One of :data:`REGIMES`.

    Raises
    ------
    InputError
        On an invalid input, naming it, as :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap`
        refuses it.
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_staleness(staleness)
    if refresh > 1 and staleness > 0:
        raise InputError("give either refresh or staleness, not both")
    if refresh > 1 or staleness > 0:
        if refresh > 1:
            # below (1 - beta) / k every K is stable (first_unstable_refresh), where the Jury
            # conditions, differences of terms near 1, round to unstable at a tiny k
            if refresh >= (1.0 - beta) / k and not refresh_stable(beta, k, refresh):
                return "unstable"
            matrix = np.array([[compiled(f"monodromy_{i}{j}")(beta, k, refresh) for j in (1, 2)]
                               for i in (1, 2)], dtype=float)
            roots = np.linalg.eigvals(matrix)
        else:
            if not _below_staleness_limit(beta, k, staleness):
                return "unstable"
            roots = np.roots(_staleness_coefficients(beta, k, staleness))
        dominant = roots[np.argmax(np.abs(roots))]
        if abs(dominant.imag) > 1e-12 * max(abs(dominant), 1e-300):
            return "oscillatory"
        return "flip" if dominant.real < 0 else "overdamped"
    if k >= compiled("stiffness_max")(beta):
        return "unstable"
    if k > compiled("flip_stiffness")(beta):
        return "flip"
    boundary = compiled("critical_stiffness_discrete")(beta)
    if abs(k - boundary) <= _CRITICAL_TOLERANCE * max(boundary, 1e-300):
        return "critical"
    return "oscillatory" if k > boundary else "overdamped"


def schur_stable(coefficients: np.ndarray | list[float]) -> bool:
    """Test whether every root of a real polynomial lies strictly inside the unit circle.

    Schur-Cohn recursion on the coefficients; O(n^2).

    Parameters
    ----------
    coefficients : array_like
        Real coefficients, highest power first, the first one non-zero.

    Returns
    -------
    bool
        True when the polynomial is Schur stable.
    """
    a = np.asarray(coefficients, dtype=float)
    a = a / a[0]
    while a.size > 1:
        reflection = a[-1]  # a_0 / a_n: the product of the roots' moduli bound
        if abs(reflection) >= 1.0:
            return False
        a = (a[:-1] - reflection * a[::-1][:-1]) / (1.0 - reflection**2)
    return True


def _staleness_coefficients(beta: float, k: float, d: int) -> np.ndarray:
    """z^(d+1) - (1+beta) z^d + beta z^(d-1) + k, highest power first (d >= 1)."""
    coefficients = np.zeros(d + 2)
    coefficients[0], coefficients[1], coefficients[2] = 1.0, -(1.0 + beta), beta
    coefficients[-1] += k
    return coefficients


def staleness_stable(momentum: float, stiffness: float, staleness: int) -> bool:
    """Test the stability of the map whose force is stale by d steps (docs/theory.md section 5).

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k [1/step^2].
    staleness : int
        Fixed staleness d >= 0 [steps]; 0 is on-policy.

    Returns
    -------
    bool
        True when every root of z^(d+1) - (1+beta) z^d + beta z^(d-1) + k lies inside the unit
        circle (on-policy: 0 < k < 2 (1 + beta), and beta < 1, where the limit exists).
    """
    beta, k = momentum, stiffness
    d = check_int("staleness", staleness, minimum=0)
    if d == 0:
        return beta < 1 and 0 < k < compiled("stiffness_max")(beta)
    return schur_stable(_staleness_coefficients(beta, k, d))


def staleness_stiffness_max(momentum: float, staleness: int) -> float:
    """Return the largest stable stiffness with staleness d (docs/theory.md section 5).

    Closed form: the polynomial factors as z^(d-1) (z - 1)(z - beta) + k, so a root reaches the
    unit circle at z = exp(i theta) where the phase condition
    (d - 1/2) theta + arg(exp(i theta) - beta) = pi / 2 holds (its left side rises from 0 at
    theta = 0 to d pi at theta = pi, so the first crossing has one root theta in (0, pi)), at
    k = ``|exp(i theta) - 1| |exp(i theta) - beta|`` = 2 sin(theta / 2)
    sqrt((1 - beta)^2 + 4 beta sin^2(theta / 2)), which rises with theta. The inverse of
    :func:`staleness_max`'s crossing lag; O(1) in d, and equal to the derivations
    ``staleness_stiffness_max_d1`` and ``staleness_stiffness_max_d2`` at d = 1, 2.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    staleness : int
        Fixed staleness d >= 0 [steps].

    Returns
    -------
    float
        The stiffness [1/step^2] at which stability is first lost as k grows (on-policy, d = 0:
        2 (1 + beta)).
    """
    beta = float(check_momentum(momentum, scalar=True))
    d = check_int("staleness", staleness, minimum=0)
    if d == 0:
        return float(compiled("stiffness_max")(beta))

    def phase(theta: float) -> float:
        half = math.sin(theta / 2)
        return ((d - 0.5) * theta + math.atan2(math.sin(theta), (1 - beta) - 2 * half * half)
                - math.pi / 2)

    theta = brentq(phase, 0.0, math.pi, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    half = math.sin(theta / 2)
    return 2.0 * half * math.sqrt((1 - beta) ** 2 + 4 * beta * half * half)


def refresh_stiffness_max(momentum: float, refresh: int) -> float:
    """Return the largest stable stiffness with refresh interval K (docs/theory.md section 5).

    Bisection of the compiled Jury conditions (:func:`refresh_stable`) below the on-policy
    limit 2 (1 + beta), to 1e-14 in k; K = 1 is on-policy.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    refresh : int
        Refresh interval K >= 1.

    Returns
    -------
    float
        The stiffness [1/step^2] at which stability is first lost as k grows.
    """
    beta = float(check_momentum(momentum, scalar=True))
    refresh = check_int("refresh", refresh, minimum=1)
    upper = float(compiled("stiffness_max")(beta))
    if refresh == 1 or refresh_stable(beta, upper * (1 - 1e-12), refresh):
        return upper
    return float(brentq(lambda k: 0.5 - float(refresh_stable(beta, k, refresh)), 1e-12, upper,
                        xtol=1e-14))


def staleness_max(*, momentum: float, stiffness: float,
                  cap: int = STALENESS_SEARCH_CAP) -> int | None:
    """Return the largest stable fixed staleness d (docs/theory.md section 5).

    The characteristic polynomial factors as z^(d-1) (z - 1)(z - beta) + k, so a root on the
    unit circle z = exp(i theta) needs ``|exp(i theta) - 1| |exp(i theta) - beta| = k``, which fixes
    theta independently of d (the left side grows monotonically from 0 to 2(1+beta) on
    (0, pi)), and the phase condition (d - 1) theta + arg(exp(i theta) - 1)
    + arg(exp(i theta) - beta) = pi, which gives the crossing lag d0 in O(1): the map is stable
    for d < d0 (the continuum delay equation's k d < pi/2, made exact). A lag within round-off
    of d0 is decided by the Schur-Cohn test, once. The crossing decides a lag beyond ``cap``
    before any polynomial test, whose coefficients round the root 1 - k / (1 - beta) onto the
    unit circle at a tiny k.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k [1/step^2], > 0.
    cap : int
        Largest staleness searched, >= 0 [steps].

    Returns
    -------
    int or None
        The largest stable d (0: only on-policy is stable), None when not even on-policy is
        (k >= 2 (1 + beta)). ``grpodyn predict --json`` gives it as ``staleness_max`` with
        ``staleness_max_status`` ``determined``, or null with ``unstable``.

    Raises
    ------
    BeyondCap
        When the map stays stable at every d up to ``cap`` (an ``InputError``); ``grpodyn
        predict --json`` gives ``staleness_max`` null with ``staleness_max_status``
        ``beyond_cap`` and a ``staleness_max_reason`` naming the cap.
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    cap = check_int("cap", cap, minimum=0)
    if not staleness_stable(beta, k, 0):
        return None
    d0 = _staleness_crossing(beta, k)
    if d0 > cap + 1:
        raise BeyondCap(f"staleness stays stable beyond the cap d = {cap}", cap)
    if not staleness_stable(beta, k, 1):
        return 0
    first_unstable = math.ceil(d0)
    nearest = round(d0)
    if abs(d0 - nearest) <= 1e-9 * max(d0, 1.0) and nearest <= cap:
        # a tie with the boundary: the exact test on that lag (marginal counts as unstable)
        first_unstable = nearest if not staleness_stable(beta, k, nearest) else nearest + 1
    if first_unstable - 1 > cap:
        raise BeyondCap(f"staleness stays stable beyond the cap d = {cap}", cap)
    return max(first_unstable - 1, 0)


def _below_staleness_limit(beta: float, k: float, d: int) -> bool:
    """Return whether the map with staleness d is stable, decided by :func:`staleness_max`."""
    try:
        limit = staleness_max(momentum=beta, stiffness=k, cap=max(d, 1))
    except BeyondCap:
        return True
    return limit is not None and d <= limit


def _staleness_crossing(beta: float, k: float) -> float:
    """Return the real lag d0 at which a root of z^(d-1)(z-1)(z-beta) + k crosses |z| = 1.

    The angle is solved for as ``theta = k u``: at a tiny k (1e-300) the root finder's products
    of theta underflow, u is of order one. As ``2 theta (1 - beta) / pi <= |exp(i theta) - 1|
    |exp(i theta) - beta| <= theta (1 + beta)`` on (0, pi), u lies in [1 / (1 + beta),
    pi / (1 - beta)] (the upper end doubled against round-off). Where theta is too small for
    the lag to be a float, d0 is infinite (beyond every cap).
    """

    def magnitude(u: float) -> float:  # |exp(i theta) - 1| |exp(i theta) - beta| / k - 1
        theta = k * u
        return (2.0 * math.sin(theta / 2) / k
                * math.sqrt(1 - 2 * beta * math.cos(theta) + beta**2) - 1.0)

    u = brentq(magnitude, 1.0 / (1.0 + beta), min(math.pi / k, math.pi / (1.0 - beta)),
               xtol=1e-300, rtol=4 * np.finfo(float).eps)
    theta = k * u
    phase = math.atan2(math.sin(theta), math.cos(theta) - beta)
    return 1.0 + (math.pi / 2 - theta / 2 - phase) / theta


def refresh_stable(momentum: float | np.ndarray, stiffness: float | np.ndarray,
                   refresh: int | np.ndarray) -> np.ndarray:
    """Test stability with refresh interval K (sample-and-hold; docs/theory.md section 5).

    Parameters
    ----------
    momentum, stiffness, refresh : float or array_like
        Momentum beta, stiffness k [1/step^2] and refresh interval K, broadcast together.

    Returns
    -------
    numpy.ndarray
        Booleans: the compiled Jury conditions of the cycle's monodromy matrix hold.
    """
    condition = compiled("refresh_stability_condition")
    return np.asarray(condition(momentum, stiffness, refresh), dtype=bool)


def first_unstable_refresh(*, momentum: float, stiffness: float,
                           cap: int = REFRESH_SEARCH_CAP) -> int | None:
    """Return the smallest unstable refresh interval K (docs/theory.md section 5).

    Marginal intervals (cycle spectral radius 1 up to round-off, e.g. beta = 0, K k = 2) count
    as unstable. Every K below (1 - beta) / k is stable: over one cycle the held force moves e
    by -k S_K e_ref with S_K <= K / (1 - beta), and for K k < 1 - beta both Jury bounds,
    ``abs(det M_K) < 1`` and ``tr M_K > -1 - det M_K``, hold (the third holds for every
    k > 0). The search starts there, and a bound beyond ``cap`` answers without one: at a tiny
    k the compiled Jury conditions, differences of terms near 1, round to unstable.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k [1/step^2], > 0.
    cap : int
        Largest interval searched, >= 1 [steps].

    Returns
    -------
    int or None
        The first unstable K, None when K = 1 is already unstable.

    Raises
    ------
    BeyondCap
        When every K up to ``cap`` is stable (an ``InputError``).
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    cap = check_int("cap", cap, minimum=1)
    bound = (1.0 - beta) / k
    if bound > cap:
        raise BeyondCap(f"refresh interval stays stable beyond the cap K = {cap}", cap)
    if bound <= 1 and not refresh_stable(beta, k, 1):
        return None
    # windows that grow fourfold from the bound up to the cap: the first unstable K can lie
    # far below the 4 / k of a small stiffness (about 10 / (1 - beta) at critical damping)
    low, width = max(int(bound), 1), 16
    while low <= cap:
        ks = np.arange(low, min(low + width, cap + 1))
        unstable = ~refresh_stable(beta, k, ks) & (ks >= bound)
        if unstable.any():
            first = int(ks[np.argmax(unstable)])
            # A tie with the boundary is decided by round-off in the strict Jury conditions;
            # a marginal interval (cycle radius 1 to round-off) counts as unstable.
            if first > 2 and mixed_refresh_radius(
                    momentum=beta, stiffness_current=0.0, stiffness_lagged=k,
                    refresh=first - 1) >= 1 - _MARGINAL_TOLERANCE:
                return first - 1
            return first
        low, width = low + width, width * 4
    raise BeyondCap(f"refresh interval stays stable beyond the cap K = {cap}", cap)


def refresh_max(*, momentum: float, stiffness: float,
                cap: int = REFRESH_SEARCH_CAP) -> int | None:
    """Return the largest refresh interval K before the first unstable one.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k [1/step^2], > 0.
    cap : int
        Largest interval searched (:func:`first_unstable_refresh`).

    Returns
    -------
    int or None
        The largest stable K, None when K = 1 is unstable (k >= 2 (1 + beta)). ``grpodyn
        predict --json`` gives it as ``refresh_max`` with ``refresh_max_status``
        ``determined``, or null with ``unstable``.

    Raises
    ------
    BeyondCap
        When every K up to ``cap`` is stable (an ``InputError``); ``grpodyn predict --json``
        gives ``refresh_max`` null with ``refresh_max_status`` ``beyond_cap`` and a
        ``refresh_max_reason`` naming the cap.
    """
    first = first_unstable_refresh(momentum=momentum, stiffness=stiffness, cap=cap)
    return None if first is None else first - 1


def regime_map(momentum: float | np.ndarray, stiffness: float | np.ndarray) -> np.ndarray:
    """Index the on-policy regime into :data:`REGIMES` over broadcast grids.

    Vectorised form of :func:`regime` (without lag): exact discrete boundaries.

    Parameters
    ----------
    momentum, stiffness : float or array_like
        Momentum beta in [0, 1) and stiffness k > 0 [1/step^2], broadcast together.

    Returns
    -------
    numpy.ndarray
        Integer codes, ``REGIMES[code]`` is the regime.
    """
    beta = check_momentum(momentum)
    k = check_positive("stiffness", stiffness)
    beta, k = np.broadcast_arrays(beta, k)
    lower = compiled("critical_stiffness_discrete")(beta)
    codes = np.select(
        [k >= compiled("stiffness_max")(beta), k > compiled("flip_stiffness")(beta),
         np.abs(k - lower) <= _CRITICAL_TOLERANCE * np.maximum(lower, 1e-300), k > lower],
        [REGIMES.index("unstable"), REGIMES.index("flip"), REGIMES.index("critical"),
         REGIMES.index("oscillatory")], default=REGIMES.index("overdamped"))
    return codes


def refresh_threshold_comparison(*, momentum: float, stiffness: float) -> dict[str, float]:
    """Compare three estimates of the first unstable refresh interval (docs/theory.md section 5).

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness : float
        Stiffness k [1/step^2], > 0.

    Returns
    -------
    dict of str to float
        ``exact`` (NaN when K = 1 is unstable), ``continuum`` and ``reference_bound``.
    """
    exact = first_unstable_refresh(momentum=momentum, stiffness=stiffness)
    return {"exact": float("nan") if exact is None else float(exact),
            "continuum": float(compiled("refresh_threshold_continuum")(momentum, stiffness)),
            "reference_bound": float(compiled("refresh_threshold_reference")(momentum,
                                                                             stiffness))}


def refresh_cycle_steps(momentum: float, stiffness_current: float, stiffness_lagged: float,
                        refresh: int) -> list[np.ndarray]:
    """Return the step matrices of one refresh cycle, state (e_n, e_{n-1}, e_ref).

    e_{n+1} = (1+beta) e_n - beta e_{n-1} - k_c e_n - k_l e_ref; at the first phase of the cycle
    e_ref is first reset to e_n (the refresh), at the others it is held (docs/theory.md section 5).

    Parameters
    ----------
    momentum : float
        Momentum beta.
    stiffness_current, stiffness_lagged : float
        The parts k_c and k_l of the stiffness acting on the current and the held displacement.
    refresh : int
        Refresh interval K (number of matrices).

    Returns
    -------
    list of numpy.ndarray
        K 3 x 3 matrices, the first one with the refresh.
    """
    beta = momentum
    step = np.array([[1.0 + beta - stiffness_current, -beta, -stiffness_lagged],
                     [1.0, 0, 0], [0, 0, 1.0]])
    refresh_now = np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0, 0, 0]])
    return [step @ refresh_now if phase == 0 else step for phase in range(refresh)]


def mixed_refresh_radius(*, momentum: float, stiffness_current: float, stiffness_lagged: float,
                         refresh: int) -> float:
    """Return the spectral radius per refresh cycle when only part of the force is held.

    e_{n+1} = (1+beta) e_n - beta e_{n-1} - k_c e_n - k_l e_ref, with e_ref the value at the last
    refresh: the force of importance-corrected sample reuse. k_c = 0 is sample-and-hold.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness_current, stiffness_lagged : float
        Stiffness on the current and on the held displacement [1/step^2].
    refresh : int
        Refresh interval K.

    Returns
    -------
    float
        Spectral radius of the cycle's product matrix (stable below 1).
    """
    beta = float(check_momentum(momentum, scalar=True))
    refresh = check_int("refresh", refresh, minimum=1)
    cycle = np.eye(3)
    for step in refresh_cycle_steps(beta, float(stiffness_current), float(stiffness_lagged),
                                    refresh):
        cycle = step @ cycle
    return float(np.max(np.abs(np.linalg.eigvals(cycle))))


def first_unstable_mixed_refresh(*, momentum: float, stiffness_current: float,
                                 stiffness_lagged: float, cap: int = 100_000) -> int | None:
    """Return the smallest unstable refresh interval with a partly held force.

    A cycle radius within round-off of 1 is marginal and counted as unstable, as the exact
    (strict) Jury conditions of the sample-and-hold case do. The cycle product is built
    incrementally (the cycle of K + 1 is one more step times the cycle of K: the same products,
    in the same order, as :func:`mixed_refresh_radius`), so the search costs O(K) products.

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 1).
    stiffness_current, stiffness_lagged : float
        Stiffness on the current and on the held displacement [1/step^2].
    cap : int
        Largest interval searched.

    Returns
    -------
    int or None
        The first unstable K, None when K = 1 is already unstable.

    Raises
    ------
    InputError
        When every K up to ``cap`` is stable.
    """
    beta = float(check_momentum(momentum, scalar=True))
    cap = check_int("cap", cap, minimum=1)
    steps = refresh_cycle_steps(beta, float(stiffness_current), float(stiffness_lagged), 2)
    cycle = steps[0] @ np.eye(3)
    for refresh in range(1, cap + 1):
        if refresh > 1:
            cycle = steps[1] @ cycle
        if float(np.max(np.abs(np.linalg.eigvals(cycle)))) >= 1 - _MARGINAL_TOLERANCE:
            return None if refresh == 1 else refresh
    raise InputError(f"refresh interval stays stable beyond the cap K = {cap}")


def stability_map(momentum: float | np.ndarray, stiffness: float | np.ndarray, *,
                  refresh: int = 1) -> np.ndarray:
    """Map stability with refresh interval K over broadcast momentum x stiffness grids.

    Parameters
    ----------
    momentum, stiffness : float or array_like
        Momentum beta in [0, 1) and stiffness k > 0 [1/step^2], broadcast together.
    refresh : int
        Refresh interval K.

    Returns
    -------
    numpy.ndarray
        Booleans, True where the map is stable.
    """
    beta = check_momentum(momentum)
    k = check_positive("stiffness", stiffness)
    return refresh_stable(beta, k, refresh)


def beyond_float_range(paths: np.ndarray) -> np.ndarray:
    """Return paths e_n with every value from the first one out of the float range on +-inf.

    An unstable map's path grows geometrically until it overflows; the step after, inf - inf
    gives NaN. From the first value out of range (inf, or NaN of an inf - inf), a path is inf
    with the sign of that value (of the last finite one for a NaN): it has left every finite
    bound, and its sign after that is not resolved.

    Parameters
    ----------
    paths : numpy.ndarray
        e_n [reward], shape (runs, steps + 1), finite at n = 0.

    Returns
    -------
    numpy.ndarray
        A copy, with no NaN.
    """
    e = np.array(paths, dtype=float)
    for row in np.flatnonzero(~np.isfinite(e).all(axis=1)):
        first = int(np.argmax(~np.isfinite(e[row])))
        value = e[row, first] if np.isinf(e[row, first]) else e[row, max(first - 1, 0)]
        e[row, first:] = math.copysign(math.inf, value)
    return e
