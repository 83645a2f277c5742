"""The system object of the theory: the mean-field map of one run, built from its hyperparameters.

A :class:`MeanFieldMap` holds what a run is set up with (optimizer, learning rate and schedule,
momentum, group size G, prompts per step B, KL, refresh / staleness / importance-corrected
reuse) and the measured constants (the curvature kappa; for Adam the Adam-normalised curvature
kappa_A = kappa / |g| and the noise ratio rho_A = sigma_g^2 / g^2 that sets v_hat). From them it
gives the stiffness, the regime, the poles, the damping, the stability margins, the stationary
variance and the mean trajectory with a band (docs/theory.md sections 1-6 and 9).

Heavy-ball SGD: k = lr kappa (derivation ``stiffness``), independent of G and B.
Adam: k = lr (1 - beta1) kappa_A / sqrt(1 + rho_A / (B G)) (``adam_stiffness_noise_ratio``),
G-invariant only where the signal dominates (rho_A << B G). Both write the step as a momentum
buffer M_n = beta M_{n-1} + w e_{n-l(n)}, e_{n+1} = e_n - s_n M_n, with w = 1, s_n = lr_n kappa
(SGD) or w = 1 - beta1, s_n = lr_n kappa_A / ((1 - beta1^(n+1)) sqrt(1 + rho_A/(B G))) (Adam, bias
corrected); at constant lr and without bias correction this is the map of section 1.
With a noise curvature the sampling noise also costs expected reward at second order: a drag
subtracted every step (``sgd_noise_drag``, ``adam_noise_drag``; :meth:`MeanFieldMap.noise_drag`)
that lowers the fixed point by drag (1 - beta) / k (:attr:`MeanFieldMap.plateau_shift`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np

from grpodyn.ground import (
    InputError,
    check_finite,
    check_fraction,
    check_group_size,
    check_int,
    check_momentum,
    check_positive,
    json_number,
    one_of_alias,
)

from . import fluctuations, stability
from .compiled import compiled
from .map_iteration import SCHEDULES, drift_factor, drift_factor_of, iterate_map, lr_schedule
from .trajectory_type import Trajectory, deprecated

__all__ = ["MeanFieldMap", "TrajectoryBand", "OPTIMIZERS", "SCHEDULES", "lr_schedule",
           "iterate_map", "drift_factor"]

OPTIMIZERS = ("sgd", "adam")


class TrajectoryBand(Trajectory):
    """A predicted mean reward path and its band, as a :class:`Trajectory` (steps from 0 at r0).

    ``mean`` is ``values``. Constructing it directly, with the older signature
    ``(steps, mean, lower, upper, level, diverged)``, is deprecated: build a ``Trajectory``.
    """

    def __init__(self, steps: np.ndarray, mean: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, level: float, diverged: bool) -> None:
        deprecated("TrajectoryBand", "Trajectory(steps=..., values=mean, lower=..., upper=..., "
                   "level=...)")
        super().__init__(steps=steps, values=mean, lower=lower, upper=upper, level=level,
                         unstable=bool(diverged))

    @property
    def mean(self) -> np.ndarray:
        """Mean reward path [reward]: the same array as ``values``."""
        return self.values


@dataclass(frozen=True)
class MeanFieldMap:
    """The mean-field map of a run: hyperparameters plus measured constants.

    Parameters
    ----------
    lr : float
        Peak learning rate eta.
    kappa : float
        Curvature: kappa [gradient/reward] for SGD; kappa_A = kappa / ``|g|`` [1/reward] for Adam.
    optimizer : str
        ``"sgd"`` (heavy-ball) or ``"adam"``.
    momentum : float
        Heavy-ball beta, or Adam's beta1.
    beta2 : float
        Adam's second-moment decay (enters only through the assumption that v_hat is slow);
        SGD refuses a value other than the default, which it would ignore.
    noise_ratio : float, optional
        Adam's rho_A = sigma_g^2 / g^2 per completion; None means signal-dominated (G-invariant).
        Adam's only: SGD refuses it and ``prompt_noise_ratio``, Adam ``prompt_noise`` and
        ``completion_noise`` (each would be ignored).
    group_size, batch : int, optional
        G completions per prompt and B prompts per step (Adam's v_hat needs both).
    kl : float
        KL coefficient (TRL's beta); it sets the plateau, which is measured, not derived here.
    refresh, staleness, num_iterations : int
        Sample-and-hold refresh interval K, fixed staleness d (at most
        :data:`~grpodyn.numerics.stability.STALENESS_MAX`, as on the command line), and
        importance-corrected reuse mu.
    schedule, warmup : str, int
        Learning-rate schedule (``constant``, ``linear``, ``cosine``) and linear warm-up steps.
    finite_group : bool
        Put the finite-G drift factor on the force at the mean-field reward
        (:func:`drift_factor`; needs ``group_size``): the trajectory then depends on the plateau
        and the map is nonlinear. ``stiffness`` and the limits stay the large-G (D = 1) values.
    prompt_noise_ratio : float, optional
        Adam's rho_p = sigma_p^2 / g^2, the between-prompt part of the noise (per prompt); with
        it Adam's stiffness is ``adam_stiffness_split`` and ``noise_ratio`` is rho_c.
    noise_curvature : float
        h_noise [reward/parameter^2]: the reward's curvature along the step's sampling noise,
        which makes the noise cost expected reward at second order (``noise_drag``); 0: none.
    prompt_noise, completion_noise : float
        SGD's sigma_p^2 and sigma_c^2 [gradient^2] of the split step variance (derivation
        ``sampling_variance_split``). The drag depends only on h sigma^2: a sweep fit passes
        h = 1 and the products.

    Raises
    ------
    InputError
        On an invalid input, naming it; also where the stiffness k leaves the normal floats
        (:func:`~grpodyn.numerics.stability.check_stiffness`, as :func:`predict` refuses it).
    """

    lr: float
    kappa: float
    optimizer: str = "sgd"
    momentum: float = 0.0
    beta2: float = 0.999
    noise_ratio: float | None = None
    group_size: int | None = None
    batch: int | None = None
    kl: float = 0.0
    refresh: int = 1
    staleness: int = 0
    num_iterations: int = 1
    schedule: str = "constant"
    warmup: int = 0
    finite_group: bool = False
    prompt_noise_ratio: float | None = None
    noise_curvature: float = 0.0
    prompt_noise: float = 0.0
    completion_noise: float = 0.0
    assumptions: tuple[str, ...] = field(default=(), init=False)

    def __repr__(self) -> str:
        """Return the constructor call with the fields that differ from their defaults."""
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.init
                 and (f.default is MISSING or getattr(self, f.name) != f.default)]
        return f"MeanFieldMap({', '.join(shown)})"

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise InputError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got "
                             f"{self.optimizer!r}")
        check_positive("lr", self.lr, scalar=True)
        check_positive("kappa", self.kappa, scalar=True)
        check_momentum(self.momentum, scalar=True)
        check_momentum(self.beta2, "beta2", largest=None, scalar=True)
        check_positive("kl", self.kl, allow_zero=True, scalar=True)
        for name in ("lr", "kappa", "momentum", "beta2", "kl"):  # np.float32(0.01) as 0.01
            object.__setattr__(self, name, float(getattr(self, name)))
        refresh = check_int("refresh", self.refresh, minimum=1)
        staleness = stability.check_staleness(self.staleness)
        reuse = check_int("num_iterations", self.num_iterations, minimum=1)
        if (refresh > 1) + (staleness > 0) + (reuse > 1) > 1:
            raise InputError("give one of refresh, staleness, num_iterations at a time")
        if self.group_size is not None:
            check_group_size(self.group_size)
        if self.batch is not None:
            check_int("batch", self.batch, minimum=1)
        if self.schedule not in SCHEDULES:
            raise InputError(f"schedule must be one of {', '.join(SCHEDULES)}, got "
                             f"{self.schedule!r}")
        check_int("warmup", self.warmup, minimum=0)
        self._refuse_other_optimizers_constants()
        notes = []
        if self.optimizer == "adam":
            notes.append("Adam as heavy-ball with beta = beta1 and a slowly varying v_hat "
                         "(beta2 close to 1), bias-corrected first moment")
            if self.noise_ratio is None:
                notes.append("Adam signal-dominated (no noise ratio): stiffness independent of "
                             "G and B")
            else:
                check_positive("noise_ratio", self.noise_ratio, allow_zero=True)
                if self.group_size is None or self.batch is None:
                    raise InputError("Adam with a noise ratio needs group_size and batch")
        for name in ("prompt_noise_ratio", "noise_curvature", "prompt_noise", "completion_noise"):
            if getattr(self, name) is not None:
                check_positive(name, getattr(self, name), allow_zero=True)
        if self.noise_curvature > 0:
            if self.group_size is None or self.batch is None:
                raise InputError("a noise drag (noise_curvature > 0) needs group_size and batch")
            if self.optimizer == "adam" and self.noise_ratio is None:
                raise InputError("Adam's noise drag needs the noise ratio (noise_ratio)")
            notes.append("sampling noise costs expected reward at second order: a drag of "
                         f"{self.noise_drag:.3g} reward per step at the peak lr (h_noise "
                         "Var(step) / 2; the drag does not depend on the displacement)")
        if self.finite_group:
            if self.group_size is None:
                raise InputError("finite_group needs group_size")
            notes.append("finite-G drift factor 1 - p^G - (1-p)^G on the force at the mean-field "
                         "reward p (stiffness and limits quoted at D = 1)")
        if reuse > 1:
            notes.append("importance-corrected reuse treated as on-policy (the ratio removes the "
                         "lag of the mean force to first order)")
        object.__setattr__(self, "assumptions", tuple(notes))
        what = "times kappa" if self.optimizer == "sgd" else "with kappa_A"
        stability.check_stiffness(self.stiffness, f"lr {self.lr:g} {what} {self.kappa:g}")

    def _refuse_other_optimizers_constants(self) -> None:
        """Refuse a constant of the other optimizer, which this map would ignore."""
        names = {"sgd": ("noise_ratio", "prompt_noise_ratio", "beta2"),
                 "adam": ("prompt_noise", "completion_noise")}[self.optimizer]
        for name in names:
            value, unset = getattr(self, name), 0.999 if name == "beta2" else 0.0
            if value is not None and (np.ndim(value) or value != unset):
                raise InputError(f"{name} is {'Adam' if self.optimizer == 'sgd' else 'SGD'}'s "
                                 f"and optimizer={self.optimizer!r} would ignore it: leave it "
                                 f"out (got {value!r})")

    # --- constants ---------------------------------------------------------------------------
    @property
    def _beta(self) -> float:
        """Momentum beta as a float (the maths' short name)."""
        return float(self.momentum)

    def stiffness_at(self, lr: float | np.ndarray) -> float | np.ndarray:
        """Return k at learning rate ``lr`` [1/step^2] (without Adam's bias correction)."""
        if self.optimizer == "sgd":
            return compiled("stiffness")(lr, self.kappa)
        if self.noise_ratio is None:
            return compiled("adam_stiffness_signal_limit")(lr, self._beta, self.kappa)
        if self.prompt_noise_ratio:
            return compiled("adam_stiffness_split")(lr, self._beta, self.kappa,
                                                    self.prompt_noise_ratio, self.noise_ratio,
                                                    self.batch, self.group_size)
        return compiled("adam_stiffness_noise_ratio")(lr, self._beta, self.kappa, self.noise_ratio,
                                                      self.batch, self.group_size)

    def noise_drag_at(self, lr: float | np.ndarray) -> float | np.ndarray:
        """Return the reward lost per step to the sampling noise at ``lr`` [reward/step].

        Heavy-ball SGD: h lr^2 (sigma_p^2/B + sigma_c^2/(B G)) / (2 (1 - beta^2)) (derivation
        ``sgd_noise_drag``); Adam: h lr^2 (1-beta1) / (2 (1+beta1)) rho / (1 + rho),
        rho = rho_p/B + rho_c/(B G) (``adam_noise_drag``); docs/theory.md section 9. 0 without a
        noise curvature.
        """
        if not self.noise_curvature:
            return 0.0 * np.asarray(lr, dtype=float)
        if self.optimizer == "sgd":
            return compiled("sgd_noise_drag")(lr, self._beta, self.noise_curvature,
                                              self.prompt_noise, self.completion_noise,
                                              self.batch, self.group_size)
        return compiled("adam_noise_drag")(lr, self._beta, self.noise_curvature,
                                           self.prompt_noise_ratio or 0.0, self.noise_ratio,
                                           self.batch, self.group_size)

    @property
    def noise_drag(self) -> float:
        """Return the drag at the peak learning rate [reward/step] (:meth:`noise_drag_at`)."""
        return float(self.noise_drag_at(self.lr))

    @property
    def plateau_shift(self) -> float:
        """Return how far the drag lowers the plateau, drag (1 - beta) / k [reward].

        The fixed point of the map with the drag at the peak lr (derivation
        ``sgd_noise_plateau_shift`` for SGD; the same fixed point for Adam's map).
        """
        return float(self.noise_drag * (1.0 - self._beta) / self.stiffness)

    @property
    def stiffness(self) -> float:
        """Return k = a kappa at the peak learning rate [1/step^2]."""
        return float(self.stiffness_at(self.lr))

    @property
    def effective_step(self) -> float:
        """Return a = k / kappa.

        Lr for SGD, lr (1 - beta1) / sqrt(v_hat) (in units of 1/|g|) for Adam.
        """
        return self.stiffness / self.kappa

    @property
    def mean_lag(self) -> float:
        """l_bar: staleness d, or (K - 1)/2 for a refresh interval K, 0 otherwise [steps]."""
        if self.staleness:
            return float(self.staleness)
        return float(compiled("mean_refresh_lag")(self.refresh))

    @property
    def mass(self) -> float:
        """Mass m = (1 + beta) / 2 of the continuum limit (docs/theory.md section 2)."""
        return float(compiled("mass")(self._beta))

    @property
    def damping(self) -> float:
        """On-policy damping c = 1 - beta (docs/theory.md section 2)."""
        return float(compiled("damping")(self._beta))

    @property
    def effective_damping(self) -> float:
        """Damping with the mean lag of the force, c - k l_bar (docs/theory.md section 2)."""
        return float(compiled("effective_damping")(self._beta, self.stiffness, self.mean_lag))

    @property
    def zeta(self) -> float:
        """Damping ratio zeta = c / (2 sqrt(m k)) (docs/theory.md section 2)."""
        return float(compiled("damping_ratio")(self._beta, self.stiffness))

    @property
    def omega0(self) -> float:
        """Natural angular frequency omega0 [rad/step] (docs/theory.md section 2)."""
        return float(compiled("natural_frequency")(self._beta, self.stiffness))

    @property
    def tau(self) -> float:
        """Overdamped relaxation time c / k [steps] (docs/theory.md sections 3 and 9).

        NaN where the map is unstable: its deviation grows, so no relaxation time describes it
        (:attr:`PredictionResult.tau <grpodyn.numerics.predict.PredictionResult.tau>` is None
        there, ``to_dict`` gives null).
        """
        if self.regime == "unstable":
            return float("nan")
        if self.optimizer == "sgd":
            return float(compiled("relaxation_time")(self._beta, self.lr, self.kappa))
        return float(self.damping / self.stiffness)

    @cached_property
    def regime(self) -> str:
        """Regime of the exact discrete map, one of ``stability.REGIMES`` (computed once)."""
        return stability.regime(momentum=self._beta, stiffness=self.stiffness,
                                refresh=self.refresh, staleness=self.staleness)

    def poles(self) -> np.ndarray:
        """Roots z of the characteristic polynomial of the map, per step (O(d^3) at a lag d).

        With a refresh interval K: the eigenvalues of the cycle's monodromy to the power 1/K.
        """
        beta, k = self._beta, self.stiffness
        if self.refresh > 1:
            matrix = np.array([[compiled("monodromy_11")(beta, k, self.refresh),
                                compiled("monodromy_12")(beta, k, self.refresh)],
                               [compiled("monodromy_21")(beta, k, self.refresh),
                                compiled("monodromy_22")(beta, k, self.refresh)]], dtype=float)
            return np.linalg.eigvals(matrix).astype(complex) ** (1.0 / self.refresh)
        d = self.staleness
        if d == 0:
            return np.roots([1.0, -(1.0 + beta - k), beta])
        coefficients = np.zeros(d + 2)  # z^(d+1) - (1+beta) z^d + beta z^(d-1) + k
        coefficients[:3] = (1.0, -(1.0 + beta), beta)
        coefficients[-1] += k
        return np.roots(coefficients)

    @cached_property
    def spectral_radius(self) -> float:
        """Largest pole modulus per step (stable below 1; computed once per map)."""
        return float(np.max(np.abs(self.poles())))

    # --- stability ---------------------------------------------------------------------------
    @cached_property
    def stiffness_max(self) -> float:
        """Largest stable stiffness with this map's lag [1/step^2] (computed once per map).

        With a refresh interval K or a staleness d it is the limit at that lag, below the
        on-policy 2 (1 + beta) it equals without one.
        :class:`~grpodyn.numerics.predict.PredictionResult` names the on-policy limit
        ``stiffness_max`` and this one ``stiffness_max_lag``; ``to_dict`` gives it under both
        names.
        """
        if self.staleness:
            return float(stability.staleness_stiffness_max(self._beta, self.staleness))
        return float(stability.refresh_stiffness_max(self._beta, self.refresh))

    @property
    def lr_max(self) -> float:
        """Learning rate at which this map reaches ``stiffness_max`` (k is proportional to lr)."""
        return float(self.lr * self.stiffness_max / self.stiffness)

    @property
    def stability_margin(self) -> float:
        """1 - k / k_max: the fraction of headroom left before the slow mode goes unstable."""
        return float(1.0 - self.stiffness / self.stiffness_max)

    def stationary_variance(self, noise: float) -> float:
        """Stationary Var(e) [reward^2] at a per-step noise variance ``noise`` (section 6).

        inf where the map is unstable (k >= k_max): its fluctuations grow without bound.
        """
        return float(fluctuations.stationary_variance(
            momentum=self._beta, stiffness=self.stiffness, noise=noise, refresh=self.refresh,
            staleness=self.staleness))

    # --- trajectory --------------------------------------------------------------------------
    def force_factor(self, plateau: float) -> Callable[[np.ndarray], np.ndarray] | None:
        """Return f(e), the finite-G factor at reward plateau + e, or None (large-G map)."""
        if not self.finite_group:
            return None
        drift = drift_factor_of(optimizer=self.optimizer, group_size=self.group_size,
                                batch=self.batch, noise_ratio=self.noise_ratio,
                                prompt_noise_ratio=self.prompt_noise_ratio)
        return lambda e: drift(plateau + e)

    def displacement(self, steps: int, *, e0: float | np.ndarray = 1.0,
                     plateau: float | None = None, planned_steps: int | None = None
                     ) -> np.ndarray:
        """Mean displacement e_n, n = 0 .. steps, shape (len(e0), steps + 1).

        ``plateau`` (the fixed point r*) is needed with ``finite_group``: the factor is taken at
        the reward r* + e. ``planned_steps``: the run's length, to which a decaying schedule is
        shaped (:func:`lr_schedule`; default ``steps``). A path that leaves the float range is
        +-inf from there on, never NaN (:func:`~grpodyn.numerics.stability.beyond_float_range`).
        """
        steps = check_int("steps", steps, minimum=1)
        if self.finite_group and plateau is None:
            raise InputError("a finite-G map needs the plateau for its displacement")
        factor = self.force_factor(float(plateau)) if self.finite_group else None
        if (self.optimizer == "sgd" and self.schedule == "constant" and not self.warmup
                and factor is None and not self.noise_curvature):
            from .simulate import simulate_map

            return stability.beyond_float_range(np.stack([
                simulate_map(momentum=self._beta, stiffness=self.stiffness, e0=x, steps=steps,
                             refresh=self.refresh, staleness=self.staleness).e[0]
                for x in np.atleast_1d(np.asarray(e0, dtype=float))]))
        return stability.beyond_float_range(self._runs(
            steps, e0=np.atleast_1d(np.asarray(e0, dtype=float)), factor=factor,
            planned_steps=planned_steps))

    def _runs(self, steps: int, *, e0: np.ndarray,
              factor: Callable[[np.ndarray], np.ndarray] | None, planned_steps: int | None,
              force_noise: float = 0.0, seed: int | None = 0) -> np.ndarray:
        """Return e_n of runs from ``e0`` through :func:`iterate_map`, shape (runs, steps + 1).

        The step follows the schedule and warm-up (:func:`lr_schedule`), with Adam's weight
        1 - beta1 and bias correction, the drag and the finite-G ``factor``;
        ``force_noise`` [reward] and ``seed`` as for :func:`iterate_map`.
        """
        lrs = lr_schedule(self.lr, steps, schedule=self.schedule, warmup=self.warmup,
                          planned_steps=planned_steps)
        drag = np.asarray(self.noise_drag_at(lrs), dtype=float)[None, :] \
            if self.noise_curvature else None
        scale = np.asarray(self.stiffness_at(lrs), dtype=float)
        adam = self.optimizer == "adam"
        if adam:
            scale = scale / (1.0 - self._beta)
        return iterate_map(momentum=self._beta, scale=scale[None, :], e0=e0, steps=steps,
                           weight=(1.0 - self._beta) if adam else 1.0, bias_correction=adam,
                           staleness=self.staleness, refresh=self.refresh, force_factor=factor,
                           drag=drag, force_noise=force_noise, seed=seed)

    def trajectory(self, *, r0: float, plateau: float | None = None, steps: int,
                   noise: float = 0.0, level: float = 0.9, paths: int = 2000, seed: int = 0,
                   r_star: float | None = None, planned_steps: int | None = None
                   ) -> TrajectoryBand:
        """Return the mean reward path r_n = r* + e_n and the band of single runs around it.

        Parameters
        ----------
        r0 : float
            Initial reward.
        plateau : float
            Fixed point r* of the reward, the plateau (docs/theory.md section 3).
        steps : int
            Number of steps after the start.
        noise : float
            Per-step noise variance s^2 [reward^2] of the reward at the peak learning rate
            (docs/theory.md section 6). It enters the force as the gradient's sampling noise,
            so the band's single runs (Monte Carlo) go through the same map as the mean: the
            kick at step n has variance s^2 (lr_n / lr)^2 under the schedule and warm-up (larger
            in Adam's first, bias-corrected steps), with the finite-G factor and the drag.
        level : float
            Probability mass of the band, in (0, 1).
        paths, seed : int
            Monte Carlo paths and their seed.
        r_star : float, optional
            Older name of ``plateau``.
        planned_steps : int, optional
            The steps the run is set to take (TRL's ``max_steps``), where a ``linear`` or
            ``cosine`` decay reaches 0: fix it to see the first steps of a longer run. Default
            ``steps``: the decay is then shaped to the steps shown, and the same step differs
            with ``steps``.

        Returns
        -------
        TrajectoryBand
            A :class:`~grpodyn.numerics.trajectory_type.Trajectory` of the reward: steps, the
            mean as ``values`` (also ``mean``), the band (``lower`` = ``upper`` = the mean
            without noise) and the regime of the map; ``unstable`` where the path grows without
            bound (an unstable map at a constant peak lr, without the finite-G factor, which
            bounds the force). A path that leaves the float range is +-inf from that step on
            (``diverged``); so is a noise band, (-inf, inf), where a sampled path has left it.
        """
        r_star = one_of_alias("plateau", plateau, "r_star", r_star)
        if r_star is None:
            raise InputError("trajectory needs the plateau")
        r0 = float(check_finite("r0", r0, scalar=True))
        r_star = float(check_finite("plateau", r_star, scalar=True))
        noise = float(check_positive("noise", noise, allow_zero=True, scalar=True))
        level = check_fraction("level", level)
        e = self.displacement(steps, e0=r0 - r_star, plateau=r_star,
                              planned_steps=planned_steps)[0]
        mean = r_star + e
        lower = upper = mean
        if noise > 0:
            starts = np.full(check_int("paths", paths, minimum=1), r0 - r_star)
            runs = self._runs(steps, e0=starts, factor=self.force_factor(r_star),
                              planned_steps=planned_steps,
                              force_noise=np.sqrt(noise) / self.stiffness, seed=seed)
            with np.errstate(invalid="ignore", over="ignore"):  # paths beyond the float range
                lower, upper = r_star + np.quantile(runs, [(1 - level) / 2, (1 + level) / 2],
                                                    axis=0)
            gone = ~(np.isfinite(lower) & np.isfinite(upper) & np.isfinite(runs).all(axis=0))
            lower, upper = np.where(gone, -np.inf, lower), np.where(gone, np.inf, upper)
        regime = self.regime
        grows = regime == "unstable" and self.schedule == "constant" and not self.finite_group
        return TrajectoryBand.build(steps=np.arange(steps + 1), values=mean, lower=lower,
                                    upper=upper, level=float(level), regime=regime,
                                    unstable=grows)

    def to_dict(self) -> dict[str, Any]:
        """Return the constants, regime and limits as plain numbers (JSON-ready).

        Returns
        -------
        dict of str to Any
            ``stiffness_max`` and ``stiffness_max_lag`` are both the limit with this map's lag
            (:attr:`stiffness_max`; the second name as in ``grpodyn predict``, whose
            ``stiffness_max`` is the on-policy limit); ``tau`` is null where the map is
            unstable.
        """
        stiffness_max = self.stiffness_max
        return {"optimizer": self.optimizer, "lr": float(self.lr), "stiffness": self.stiffness,
                "effective_step": self.effective_step, "mass": self.mass,
                "damping": self.damping, "effective_damping": self.effective_damping,
                "zeta": self.zeta, "omega0": self.omega0, "tau": json_number(self.tau),
                "regime": self.regime, "spectral_radius": self.spectral_radius,
                "stiffness_max": stiffness_max, "stiffness_max_lag": stiffness_max,
                "lr_max": self.lr_max,
                "stability_margin": self.stability_margin, "finite_group": self.finite_group,
                "noise_drag": self.noise_drag, "plateau_shift": self.plateau_shift,
                "assumptions": list(self.assumptions)}
