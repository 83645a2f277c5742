"""Everything the theory says about a run before it starts, from its hyperparameters.

:func:`predict` is the engine of ``grpodyn predict``: the summary of a heavy-ball SGD
:class:`~grpodyn.numerics.mean_field_map.MeanFieldMap` (effective step a = lr, so stiffness
k = lr * kappa): oscillator constants, regime, stability limits, stationary fluctuations and the
predicted mean trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grpodyn.ground import (
    InputError,
    check_finite,
    check_int,
    check_momentum,
    check_positive,
    json_number,
    one_of_alias,
)

from . import stability
from .compiled import compiled
from .mean_field_map import MeanFieldMap
from .trajectory_type import Trajectory

__all__ = ["PredictionResult", "predict"]


#: The constants :class:`PredictionResult` reads from its map, in the CLI's JSON order.
_MAP_CONSTANTS = ("mass", "damping", "stiffness", "zeta", "omega0", "tau", "decay_time",
                  "regime")


@dataclass(frozen=True)
class PredictionResult:
    """The mean-field map of a run with the limits and extras :func:`predict` adds.

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
        Largest stable refresh interval K and staleness d at this stiffness (None: none).
    stationary_variance, noise_temperature : float or None
        With a noise: Var(e) [reward^2] and k Var(e).
    degenerate_group_probability : dict of str to float or None
        With a group size: p^G + (1-p)^G at the start and at the plateau.
    path : Trajectory or None
        With r0, plateau and steps: the predicted mean reward path.
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

    def __repr__(self) -> str:
        """Return one line: the regime, the relaxation time, the limits and the map."""
        tau = "None" if self.tau is None else f"{self.tau:.4g}"
        return (f"PredictionResult(regime={self.regime!r}, tau={tau}, zeta={self.zeta:.4g}, "
                f"stiffness_max={self.stiffness_max:.4g}, refresh_max={self.refresh_max}, "
                f"staleness_max={self.staleness_max}, system={self.system!r})")

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
        """Decay time of the exact map's slowest pole, -1 / ln max|z| [steps]; None if unstable.

        The deviation's envelope shrinks by e in this many steps in every regime. ``tau`` is
        the overdamped c / k, which it approaches where k << c^2; near and past critical
        damping the poles' radius is sqrt(beta) whatever k, so the envelope decays no faster
        than -1 / ln sqrt(beta) (19.0 steps at beta = 0.9) while c / k keeps falling.
        """
        if self.regime == "unstable":
            return None
        radius = self.system.spectral_radius
        return None if radius >= 1.0 else float(-1.0 / np.log(radius))

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
        """Whether the predicted path left every finite bound, or None without a path."""
        return None if self.path is None else self.path.diverged

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dict; the map's constants always, other entries only when not None.

        Returns
        -------
        dict of str to Any
            The CLI's JSON keys (``grpodyn predict --json``); ``tau`` and ``decay_time`` are
            null where the map is unstable. ``stiffness_max`` is the on-policy limit,
            ``stiffness_max_lag`` the limit with the run's lag, which ``lag`` names.
        """
        out: dict[str, Any] = {name: getattr(self, name) for name in _MAP_CONSTANTS}
        out.update(critical_stiffness=self.critical_stiffness,
                   critical_stiffness_discrete=self.critical_stiffness_discrete,
                   stiffness_max=self.stiffness_max, stiffness_max_lag=self.stiffness_max_lag,
                   lag=self.lag, refresh_max=self.refresh_max,
                   staleness_max=self.staleness_max, effective_damping=self.effective_damping)
        extras = {"stationary_variance": self.stationary_variance,
                  "noise_temperature": self.noise_temperature,
                  "degenerate_group_probability": self.degenerate_group_probability,
                  "trajectory": self.trajectory, "trajectory_diverged": self.trajectory_diverged}
        out.update(extras)
        return {key: value for key, value in out.items()
                if value is not None or key in _MAP_CONSTANTS}


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
        noise temperature.
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
        On an invalid or missing input, naming it.
    """
    r_star = one_of_alias("plateau", plateau, "r_star", r_star)
    eta = float(check_positive("lr", lr))
    beta = float(check_momentum(momentum))
    kappa = float(check_positive("kappa", kappa))
    # a subnormal stiffness has lost its digits, and the relaxation time c / k overflows
    if not np.finfo(float).tiny <= eta * kappa < np.inf:
        raise InputError(f"lr {eta:g} times kappa {kappa:g} gives the stiffness {eta * kappa:.3g}, "
                         f"outside the normal floats [{np.finfo(float).tiny:.3g}, "
                         f"{np.finfo(float).max:.3g}] the map's constants are computed in")
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_int("staleness", staleness, minimum=0)
    if refresh > 1 and staleness > 0:
        raise InputError("give either --refresh or --staleness, not both")
    system = MeanFieldMap(lr=eta, kappa=kappa, optimizer="sgd", momentum=beta, refresh=refresh,
                          staleness=staleness)
    k = system.stiffness
    extras: dict[str, Any] = {}
    if noise is not None:
        s2 = float(check_positive("noise", noise, allow_zero=True))
        variance = system.stationary_variance(s2)
        extras["stationary_variance"] = json_number(variance)
        extras["noise_temperature"] = json_number(k * variance)
    if group_size is not None:
        g = check_int("group_size", group_size, minimum=2)
        levels = {"start": r0, "plateau": r_star}
        if any(v is None for v in levels.values()):
            raise InputError("group_size needs r0 and plateau (success rates in [0, 1])")
        probs = {}
        for name, value in levels.items():
            p = float(check_finite(name, value))
            if not 0 <= p <= 1:
                raise InputError(f"{'r0' if name == 'start' else 'plateau'} must lie in [0, 1] "
                                 f"for the degenerate-group probability, got {value!r}")
            probs[name] = float(compiled("degenerate_group_probability")(g, p))
        extras["degenerate_group_probability"] = probs
    if steps is None and group_size is None and (r0 is not None or r_star is not None):
        raise InputError("r0 and plateau are used with steps (the predicted trajectory) or "
                         "group_size (the degenerate-group odds); give --steps N or "
                         "--group-size G")
    if steps is not None:
        if r0 is None or r_star is None:
            raise InputError("a trajectory needs all of r0, plateau and steps")
        n = check_int("steps", steps, minimum=1)
        start, plateau = float(check_finite("r0", r0)), float(check_finite("plateau", r_star))
        values = plateau + system.displacement(n, e0=start - plateau)[0]
        extras["path"] = Trajectory(steps=np.arange(n + 1), values=values, regime=system.regime)
    return PredictionResult(
        system=system,
        critical_stiffness=float(compiled("critical_stiffness")(beta)),
        critical_stiffness_discrete=float(compiled("critical_stiffness_discrete")(beta)),
        stiffness_max=float(compiled("stiffness_max")(beta)),
        refresh_max=stability.refresh_max(momentum=beta, stiffness=k),
        staleness_max=stability.staleness_max(momentum=beta, stiffness=k),
        **extras,
    )
