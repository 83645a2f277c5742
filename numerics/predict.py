"""Everything the theory says about a run before it starts, from its hyperparameters.

:func:`predict` is the engine of ``grpodyn predict``: the summary of a heavy-ball SGD
:class:`~grpodyn.numerics.mean_field_map.MeanFieldMap` (effective step a = lr, so stiffness
k = lr * kappa): oscillator constants, regime, stability limits, stationary fluctuations and the
predicted mean trajectory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grpodyn.ground import (
    InputError,
    check_finite,
    check_group_size,
    check_int,
    check_momentum,
    check_positive,
    json_number,
    one_of_alias,
)
from grpodyn.ground.checks import REWARD_MAGNITUDE_MAX

from . import stability
from .compiled import compiled
from .mean_field_map import MeanFieldMap
from .trajectory_type import Trajectory

__all__ = ["LIMIT_STATUSES", "UNSTABLE_NOISE_NOTE", "PredictionResult", "predict"]


#: The constants :class:`PredictionResult` reads from its map, in the CLI's JSON order.
_MAP_CONSTANTS = ("mass", "damping", "stiffness", "zeta", "omega0", "tau", "decay_time",
                  "regime")
#: What a lag limit (``refresh_max``, ``staleness_max``) is: ``determined`` (the exact largest
#: stable lag), ``beyond_cap`` (stable at every lag up to the search cap: a small stiffness) or
#: ``unstable`` (the map is unstable without a lag, so no lag is stable).
LIMIT_STATUSES = ("determined", "beyond_cap", "unstable")
#: Below this distance of the on-policy slow pole from 1 the poles of a lagged map are not
#: resolved in floating point (round-off 1e-16 / u relative), while the lag moves that pole by a
#: relative O(lag u) <= 1e-6 (lags up to 10^4): the on-policy pole gives the decay time there.
_UNRESOLVED_POLE = 1e-10
#: Why a noise asked for gives no stationary variance (``notes``; docs/theory.md section 6).
UNSTABLE_NOISE_NOTE = ("no stationary variance: the map is unstable (k >= k_max), its "
                       "fluctuations grow without bound")


@dataclass(frozen=True, eq=False)
class PredictionResult:
    """The mean-field map of a run with the limits and extras :func:`predict` adds.

    Compared by identity (``a == b`` is ``a is b``), as its ``path`` is; ``system`` (a
    :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap`) compares by value.

    The oscillator constants are the map's own (``system``, a
    :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap`), read through properties of the
    same names; ``to_dict`` gives the CLI's JSON keys.

    Attributes
    ----------
    system : MeanFieldMap
        The heavy-ball SGD map of the run.
    critical_stiffness, critical_stiffness_discrete : float
        k at critical damping, continuum and exact map (docs/theory.md section 4) [1/step^2].
    stiffness_max : float
        Largest stable on-policy stiffness 2 (1 + beta) [1/step^2]; ``stiffness_max_lag`` is
        the limit with the run's refresh interval or staleness.
    refresh_max, staleness_max : int or None
        Largest stable refresh interval K and staleness d at this stiffness, None where no
        value was determined (the status says why).
    stationary_variance, noise_temperature : float or None
        With a noise: Var(e) [reward^2] and k Var(e); None where the map is unstable (a note
        says so).
    degenerate_group_probability : dict of str to float or None
        With a group size: p^G + (1-p)^G at the start and at the plateau.
    path : Trajectory or None
        With r0, plateau and steps: the predicted mean reward path.
    refresh_max_status, staleness_max_status : str
        One of :data:`LIMIT_STATUSES`: the limit is ``determined``, lies ``beyond_cap`` (every
        lag up to :data:`~grpodyn.numerics.stability.REFRESH_SEARCH_CAP` or
        :data:`~grpodyn.numerics.stability.STALENESS_SEARCH_CAP` is stable), or does not exist
        because the map is ``unstable`` at once.
    noise : float or None
        The per-step noise variance s^2 [reward^2] asked for, None without one.
    notes : tuple of str
        Why a quantity asked for has no value (:data:`UNSTABLE_NOISE_NOTE`).
    """

    system: MeanFieldMap
    critical_stiffness: float
    critical_stiffness_discrete: float
    stiffness_max: float
    refresh_max: int | None
    staleness_max: int | None
    stationary_variance: float | None = None
    noise_temperature: float | None = None
    degenerate_group_probability: dict[str, float] | None = None
    path: Trajectory | None = None
    refresh_max_status: str = "determined"
    staleness_max_status: str = "determined"
    noise: float | None = None
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        """Return one line: the regime, the relaxation time, the limits and the map."""
        tau = "None" if self.tau is None else f"{self.tau:.4g}"
        refresh = self.refresh_max if self.refresh_max is not None else self.refresh_max_status
        stale = self.staleness_max if self.staleness_max is not None \
            else self.staleness_max_status
        return (f"PredictionResult(regime={self.regime!r}, tau={tau}, zeta={self.zeta:.4g}, "
                f"stiffness_max={self.stiffness_max:.4g}, refresh_max={refresh}, "
                f"staleness_max={stale}, system={self.system!r})")

    @property
    def mass(self) -> float:
        """Mass m = (1 + beta) / 2 (the map's :attr:`MeanFieldMap.mass`)."""
        return self.system.mass

    @property
    def damping(self) -> float:
        """On-policy damping c = 1 - beta (the map's)."""
        return self.system.damping

    @property
    def stiffness(self) -> float:
        """Stiffness k = lr kappa [1/step^2] (the map's)."""
        return self.system.stiffness

    @property
    def zeta(self) -> float:
        """Damping ratio (the map's)."""
        return self.system.zeta

    @property
    def omega0(self) -> float:
        """Natural angular frequency [rad/step] (the map's)."""
        return self.system.omega0

    @property
    def tau(self) -> float | None:
        """Overdamped relaxation time c / k [steps] (the map's); None where the map is unstable.

        An unstable map does not relax: its deviation grows, so no relaxation time describes it.
        """
        return None if self.regime == "unstable" else self.system.tau

    @property
    def decay_time(self) -> float | None:
        """Decay time of the exact map's slowest pole, -1 / ln max|z| [steps], or None.

        None where the map is unstable, or where a lagged map's slowest pole rounds onto the
        unit circle at the edge of stability.

        The deviation's envelope shrinks by e in this many steps in every regime. ``tau`` is
        the overdamped c / k, which it approaches where k << c^2; near and past critical
        damping the poles' radius is sqrt(beta) whatever k, so the envelope decays no faster
        than -1 / ln sqrt(beta) (19.0 steps at beta = 0.9) while c / k keeps falling. It is 0
        where every pole is at the origin (beta = 0 with k = 1, or with K k = 1 for a refresh
        interval K): the deviation vanishes after one step (one cycle), faster than any
        exponential. On-policy it comes from the closed form of the
        slow pole 1 - u, resolved at any k; a lagged map whose on-policy u is below 1e-10 takes
        that value too, its own poles being rounded onto the unit circle there.
        """
        if self.regime == "unstable":
            return None
        beta, k = float(self.system.momentum), self.stiffness
        on_policy = self.system.refresh == 1 and not self.system.staleness
        if on_policy or _slow_pole_distance(beta, k) < _UNRESOLVED_POLE:
            return _on_policy_decay_time(beta, k)
        radius = self.system.spectral_radius
        if radius >= 1.0:
            return None
        return 0.0 if radius == 0 else -1.0 / math.log(radius)

    @property
    def regime(self) -> str:
        """Regime of the exact discrete map (the map's)."""
        return self.system.regime

    @property
    def effective_damping(self) -> float:
        """Damping with the mean lag of the force, c - k l_bar (the map's)."""
        return self.system.effective_damping

    @property
    def lag(self) -> str:
        """The run's lag in words: ``on-policy``, ``refresh K = 4`` or ``staleness d = 2``."""
        if self.system.staleness:
            return f"staleness d = {self.system.staleness}"
        if self.system.refresh > 1:
            return f"refresh K = {self.system.refresh}"
        return "on-policy"

    @property
    def stiffness_max_lag(self) -> float:
        """Largest stable stiffness with the run's lag [1/step^2] (the map's ``stiffness_max``).

        ``stiffness_max`` is the on-policy limit 2 (1 + beta); a refresh interval K or a
        staleness d lowers the limit that applies to the run, to this value.
        """
        return self.system.stiffness_max

    @property
    def trajectory(self) -> list[float | None] | None:
        """The predicted mean reward path as JSON numbers (non-finite: None), or None."""
        return None if self.path is None else [json_number(v) for v in self.path.values]

    @property
    def trajectory_diverged(self) -> bool | None:
        """Whether the predicted path grows without bound, or None without a path.

        True when the map is unstable (a pole outside the unit circle: the steps shown are the
        start of a divergence, ``path.unstable``) or a value already overflowed
        (``path.diverged``).
        """
        return None if self.path is None else bool(self.path.unstable or self.path.diverged)

    def limit_reason(self, name: str) -> str | None:
        """Say why the lag limit ``name`` has no value, or None where it was determined.

        Parameters
        ----------
        name : {"refresh_max", "staleness_max"}
            The lag limit.

        Returns
        -------
        str or None
            The reason, naming the search cap for ``beyond_cap``.
        """
        status = getattr(self, f"{name}_status")
        if status == "unstable":
            return "the map is unstable on-policy, k >= 2 (1 + beta): no lag is stable"
        if status == "beyond_cap":
            lag, cap = (("refresh interval K", stability.REFRESH_SEARCH_CAP)
                        if name == "refresh_max" else
                        ("staleness d", stability.STALENESS_SEARCH_CAP))
            return f"stable at every {lag} up to the search cap {cap:,}"
        return None

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dict; the map's constants always, other entries only when not None.

        Returns
        -------
        dict of str to Any
            The CLI's JSON keys (``grpodyn predict --json``); ``tau`` and ``decay_time`` are
            null where the map is unstable. ``stiffness_max`` is the on-policy limit,
            ``stiffness_max_lag`` the limit with the run's lag, which ``lag`` names.
            ``refresh_max`` and ``staleness_max`` are always present: an integer, or null with
            ``refresh_max_status`` / ``staleness_max_status`` (:data:`LIMIT_STATUSES`) and a
            ``refresh_max_reason`` / ``staleness_max_reason`` saying why (the search cap, or
            an unstable map). ``trajectory_diverged`` is true where the path grows without
            bound (:attr:`trajectory_diverged`). With a noise, ``stationary_variance`` and
            ``noise_temperature`` are always present, null on an unstable map; ``notes`` (a
            list of str) says why, present only when not empty.
        """
        out: dict[str, Any] = {name: getattr(self, name) for name in _MAP_CONSTANTS}
        out.update(critical_stiffness=self.critical_stiffness,
                   critical_stiffness_discrete=self.critical_stiffness_discrete,
                   stiffness_max=self.stiffness_max, stiffness_max_lag=self.stiffness_max_lag,
                   lag=self.lag)
        for name in ("refresh_max", "staleness_max"):
            out[name] = getattr(self, name)
            out[f"{name}_status"] = getattr(self, f"{name}_status")
            out[f"{name}_reason"] = self.limit_reason(name)
        out["effective_damping"] = self.effective_damping
        extras = {"stationary_variance": self.stationary_variance,
                  "noise_temperature": self.noise_temperature,
                  "degenerate_group_probability": self.degenerate_group_probability,
                  "trajectory": self.trajectory, "trajectory_diverged": self.trajectory_diverged}
        out.update(extras, notes=list(self.notes) or None)
        kept = (*_MAP_CONSTANTS, "refresh_max", "staleness_max",
                *(("stationary_variance", "noise_temperature") if self.noise is not None else ()))
        return {key: value for key, value in out.items() if value is not None or key in kept}


def _slow_pole_distance(beta: float, k: float) -> float:
    """Return u of the on-policy pole 1 - u nearest 1 (real roots), or 1 - sqrt(beta)."""
    s = 1.0 - beta + k
    disc = s * s - 4.0 * k
    return 2.0 * k / (s + math.sqrt(disc)) if disc >= 0 else 1.0 - math.sqrt(beta)


def _on_policy_decay_time(beta: float, k: float) -> float:
    """Return -1 / ln max|z| [steps] of the stable on-policy map, resolved at any k > 0.

    The roots of z^2 - (1 + beta - k) z + beta written as z = 1 - u, u^2 - (1 - beta + k) u
    + k = 0: the slow pole's u in the cancellation-free form 2 k / (s + sqrt(s^2 - 4 k)).
    """
    s = 1.0 - beta + k
    disc = s * s - 4.0 * k
    if disc < 0:  # a complex pair of modulus sqrt(beta)
        return -2.0 / math.log(beta)
    small = 2.0 * k / (s + math.sqrt(disc))
    other = abs(1.0 - (s + math.sqrt(disc)) / 2.0)  # modulus of the other real pole
    if other > 1.0 - small:  # the flip: the negative pole dominates
        return -1.0 / math.log(other)
    return 0.0 if small >= 1.0 else -1.0 / math.log1p(-small)


def predict(*, lr: float, momentum: float, kappa: float, refresh: int = 1, staleness: int = 0,
            group_size: int | None = None, noise: float | None = None, r0: float | None = None,
            plateau: float | None = None, steps: int | None = None,
            r_star: float | None = None) -> PredictionResult:
    """Predict the dynamics of a GRPO run from its optimiser settings and curvature.

    Parameters
    ----------
    lr : float
        Learning rate eta (the effective step a of heavy-ball SGD).
    momentum : float
        Momentum beta in [0, 1).
    kappa : float
        Curvature scale kappa (slope of the projected drift), > 0.
    refresh, staleness : int
        Refresh interval K (sample-and-hold) or fixed staleness d; not both.
    group_size : int, optional
        Completions per prompt G >= 2: adds the degenerate-group probability p^G + (1-p)^G at the
        start and at the plateau (needs ``r0`` and ``plateau`` in [0, 1]).
    noise : float, optional
        Per-step noise variance s^2 of the reward increment: adds the stationary variance and the
        noise temperature (None, with :data:`UNSTABLE_NOISE_NOTE` in ``notes``, where the map
        is unstable).
    r0, plateau, steps : optional
        Initial reward, plateau r* and number of steps after the start: adds the predicted mean
        trajectory at steps 0..steps (steps + 1 points, as :meth:`MeanFieldMap.trajectory`;
        the exact discrete map of docs/theory.md section 1, momentum buffer starting at zero).
    r_star : float, optional
        Older name of ``plateau`` (the CLI's ``--r-star``).

    Returns
    -------
    PredictionResult
        The map (``system``) with its constants, regime and limits; optional entries only
        when asked for (the path as a :class:`~grpodyn.numerics.trajectory_type.Trajectory`).

    Raises
    ------
    InputError
        On an invalid or missing input, naming it; a stiffness lr kappa outside the normal
        floats, or a staleness beyond :data:`~grpodyn.numerics.stability.STALENESS_MAX`, as
        :class:`MeanFieldMap` refuses them.
    """
    r_star = one_of_alias("plateau", plateau, "r_star", r_star)
    eta = float(check_positive("lr", lr, scalar=True))
    beta = float(check_momentum(momentum, scalar=True))
    kappa = float(check_positive("kappa", kappa, scalar=True))
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_int("staleness", staleness, minimum=0)
    if refresh > 1 and staleness > 0:
        raise InputError("give either refresh (--refresh) or staleness (--staleness), not "
                         "both")
    system = MeanFieldMap(lr=eta, kappa=kappa, optimizer="sgd", momentum=beta, refresh=refresh,
                          staleness=staleness)
    k = system.stiffness
    extras: dict[str, Any] = {}
    if noise is not None:
        s2 = float(check_positive("noise", noise, allow_zero=True, scalar=True))
        variance = system.stationary_variance(s2)
        extras["noise"] = s2
        if math.isfinite(variance):
            extras["stationary_variance"], extras["noise_temperature"] = variance, k * variance
        else:
            extras["notes"] = (UNSTABLE_NOISE_NOTE,)
    if group_size is not None:
        g = check_group_size(group_size)
        levels = {"start": r0, "plateau": r_star}
        if any(v is None for v in levels.values()):
            raise InputError("group_size needs r0 and plateau (success rates in [0, 1])")
        probs = {}
        for name, value in levels.items():
            p = float(check_finite(name, value, scalar=True))
            if not 0 <= p <= 1:
                raise InputError(f"{'r0' if name == 'start' else 'plateau'} must lie in [0, 1] "
                                 f"for the degenerate-group probability, got {value!r}")
            probs[name] = float(compiled("degenerate_group_probability")(g, p))
        extras["degenerate_group_probability"] = probs
    if steps is None and group_size is None and (r0 is not None or r_star is not None):
        raise InputError("r0 and plateau are used with steps (the predicted trajectory) or "
                         "group_size (the degenerate-group odds); give steps (--steps N) or "
                         "group_size (--group-size G)")
    if steps is not None:
        if r0 is None or r_star is None:
            raise InputError("a trajectory needs all of r0, plateau and steps")
        n = check_int("steps", steps, minimum=1)
        start = float(check_finite("r0", r0, scalar=True))
        plateau = float(check_finite("plateau", r_star, scalar=True))
        for name, level in (("r0", start), ("plateau", plateau)):
            if abs(level) > REWARD_MAGNITUDE_MAX:  # the path's displacement would overflow
                raise InputError(f"{name} = {level:g}: beyond {REWARD_MAGNITUDE_MAX:g}, the "
                                 "largest reward the analyses take")
        values = plateau + system.displacement(n, e0=start - plateau)[0]
        extras["path"] = Trajectory(steps=np.arange(n + 1), values=values, regime=system.regime,
                                    unstable=system.regime == "unstable")
    for name, limit in (("refresh_max", stability.refresh_max),
                        ("staleness_max", stability.staleness_max)):
        try:
            extras[name] = limit(momentum=beta, stiffness=k)
        except stability.BeyondCap:
            extras[name], extras[f"{name}_status"] = None, "beyond_cap"
        else:
            extras[f"{name}_status"] = "unstable" if extras[name] is None else "determined"
    return PredictionResult(
        system=system,
        critical_stiffness=float(compiled("critical_stiffness")(beta)),
        critical_stiffness_discrete=float(compiled("critical_stiffness_discrete")(beta)),
        stiffness_max=float(compiled("stiffness_max")(beta)),
        **extras,
    )
