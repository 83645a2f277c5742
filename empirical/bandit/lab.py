"""Experiments on the softmax bandit: every prediction of the theory against simulation.

Each experiment is a function returning a result dataclass (``to_dict`` for JSON) and has a
``plot_*`` companion. Predictions come from the compiled theory at the measured stiffness;
observations come from :func:`grpodyn.empirical.bandit.simulation.simulate_bandit` (many
seeds) or from the simulator's own enumerated expected update. No trajectory is fitted to
measure a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from grpodyn.empirical.bandit.simulation import (
    BanditConfig,
    expected_update,
    group_update_moments,
    simulate_bandit,
)
from grpodyn.ground import InputError
from grpodyn.numerics import stability
from grpodyn.numerics.bandit import BanditTheory, bandit_theory
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.executor import run_tasks
from grpodyn.numerics.trajectory import reward_trajectory

__all__ = ["StiffnessEstimate", "measure_stiffness", "TransitionResult", "transition_experiment",
           "ThresholdResult", "threshold_experiment", "ThresholdPlan",
           "plan_threshold_experiment", "finish_threshold_experiment", "threshold_experiments",
           "GroupSizeResult", "group_size_experiment",
           "TrajectoryComparison", "trajectory_experiment", "SpectrumResult",
           "spectrum_experiment", "DEFAULT_CONFIG", "THRESHOLD_CONFIG", "GROUP_CONFIG",
           "TRAJECTORY_MOMENTUM"]

#: The lab's default bandit: GRPO, TRL's k3 KL with lam = 0.5 (x* = 2.46, p* = 0.92).
DEFAULT_CONFIG = BanditConfig(lr=0.1, group_size=16, prompts=4, estimator="grpo", kl=0.5,
                              kl_estimator="k3")


#: The lag-threshold experiments: a larger step (k = 0.055) puts the thresholds at moderate lags,
#: and B G = 8192 completions per step keep the noise floor well below the kick.
THRESHOLD_CONFIG = replace(DEFAULT_CONFIG, lr=0.4, group_size=64, prompts=128)

#: The group-size experiment: the exact forward KL (no sampled KL noise), x_ref = -1.5 and
#: lam = 1.3 put p* near 1/2, where the GRPO noise vanishes to first order.
GROUP_CONFIG = replace(DEFAULT_CONFIG, kl=1.3, kl_estimator="forward", x_ref=-1.5)

#: The momentum of the trajectory experiment: inertia the exponential law leaves out.
TRAJECTORY_MOMENTUM = 0.8


def _theory(config: BanditConfig) -> BanditTheory:
    """Return the mean-field theory of the two-arm bandit with this run's settings."""
    return bandit_theory(estimator=config.estimator, group_size=config.group_size, kl=config.kl,
                         x_ref=config.x_ref, kl_estimator=config.kl_estimator, eps=config.eps)


@dataclass(frozen=True)
class StiffnessEstimate:
    """kappa measured three ways, none of which fits a trajectory."""

    analytic: float  # -dF/dx of the sympy drift at the fixed point
    finite_difference: float  # of the simulator's enumerated expected update
    relaxation: float  # one step of the stochastic simulator after +-kicks, many seeds
    relaxation_stderr: float
    x_star: float

    @property
    def max_relative_spread(self) -> float:
        """Largest relative difference between the three estimates of kappa."""
        values = np.array([self.analytic, self.finite_difference, self.relaxation])
        return float(np.max(np.abs(values / self.analytic - 1)))

    def to_dict(self) -> dict:
        """Return the fields and the spread as a JSON-ready dict."""
        return {**asdict(self), "max_relative_spread": self.max_relative_spread}


def measure_stiffness(config: BanditConfig = DEFAULT_CONFIG, *, kick: float = 0.05,
                      seeds: int = 400_000, seed: int = 0) -> StiffnessEstimate:
    """Measure kappa three ways: analytic, exact-drift differences, and relaxation.

    Relaxation: from x* + kick and x* - kick, with the momentum buffer at zero, one simulated
    step moves x by lr * F(x); the same random stream at both kicks (common random numbers)
    cancels most sampling noise: kappa = -(mean dx(+) - mean dx(-)) / (2 kick lr).
    """
    theory = _theory(config)
    x_star = theory.x_star
    h = 1e-5
    fd = -(expected_update(x_star + h, config) - expected_update(x_star - h, config)) / (2 * h)
    sgd = replace(config, optimizer="sgd", momentum=0.0, refresh=1, staleness=0,
                  num_iterations=1)
    moves = []
    for sign in (1, -1):
        run = simulate_bandit(sgd, steps=1, seeds=seeds, seed=seed, x0=x_star + sign * kick)
        moves.append(run.x[1] - run.x[0])
    per_seed = -(moves[0] - moves[1]) / (2 * kick * config.lr)
    return StiffnessEstimate(theory.kappa, fd, float(per_seed.mean()),
                             float(per_seed.std(ddof=1) / np.sqrt(seeds)), x_star)


@dataclass(frozen=True)
class TransitionResult:
    """Overdamped-to-oscillatory transition in the momentum."""

    stiffness: float
    momenta: list[float]
    overshoot: list[float]  # largest opposite-sign excursion / kick, expected dynamics
    predicted_momentum: float  # exact discrete boundary (1 - sqrt(k))^2
    continuum_momentum: float  # zeta = 1 of the continuum limit
    observed_momentum: float  # first momentum of the sweep with an overshoot

    @property
    def relative_error(self) -> float:
        """Relative error of the observed transition momentum against the prediction."""
        return abs(self.observed_momentum / self.predicted_momentum - 1)

    def to_dict(self) -> dict:
        """Return the fields and the relative error as a JSON-ready dict."""
        return {**asdict(self), "relative_error": self.relative_error}


def _expected_paths(config: BanditConfig, momenta: np.ndarray, x0: float, steps: int
                    ) -> np.ndarray:
    """Run the simulator's expected dynamics for every momentum at once.

    Heavy-ball on the enumerated expected update: (steps + 1, momenta) logits.
    """
    xs = np.empty((steps + 1, momenta.size))
    xs[0] = previous = np.full(momenta.size, float(x0))
    for n in range(steps):
        current = xs[n]
        xs[n + 1] = current + momenta * (current - previous) + \
            config.lr * expected_update(current, config)
        previous = current
    return xs


def transition_experiment(config: BanditConfig = DEFAULT_CONFIG, *,
                          momenta: np.ndarray | list[float] | None = None,
                          kick: float = 0.05, steps: int = 3000) -> TransitionResult:
    """Sweep the momentum at fixed step; overshoot of the expected dynamics after a kick."""
    theory = _theory(config)
    k = config.lr * theory.kappa
    predicted = (1 - np.sqrt(k)) ** 2
    continuum = float(np.real(np.roots([k - 1, 2 * k + 2, k - 1]).min()))  # zeta(beta, k) = 1
    if momenta is None:
        momenta = np.linspace(max(predicted - 0.3, 0.0), min(predicted + 0.3, 0.99), 61)
    for beta in momenta:  # each momentum must be a valid config
        replace(config, momentum=float(beta))
    paths = _expected_paths(config, np.asarray(momenta, dtype=float), theory.x_star + kick,
                            steps)
    e = (paths - theory.x_star) / kick
    overshoot = [float(max(0.0, -v)) for v in e.min(axis=0)]
    observed = next((float(b) for b, o in zip(momenta, overshoot, strict=True) if o > 1e-6),
                    float("nan"))
    return TransitionResult(k, [float(b) for b in momenta], overshoot, float(predicted),
                            continuum, observed)


@dataclass(frozen=True)
class SpectrumResult:
    """Power spectrum of stationary fluctuations of x: simulated against the AR(2) prediction."""

    momentum: float
    stiffness: float
    frequencies: list[float]
    observed: list[float]  # seed-averaged periodogram
    predicted: list[float]  # derivation spectral_density with s^2 = lr^2 Var[gradient] / B
    peak_observed: float | None  # interior maximum of the smoothed periodogram; None if none
    peak_predicted: float | None  # derivation spectral_peak_frequency; None when monotone

    def to_dict(self) -> dict:
        """Return the fields as a JSON-ready dict."""
        return asdict(self)


def spectrum_experiment(config: BanditConfig = DEFAULT_CONFIG, *, momentum: float = 0.9,
                        steps: int = 4096, seeds: int = 128, seed: int = 0) -> SpectrumResult:
    """Periodogram of x around x*: a resonance peak where the theory predicts one.

    The noise level s^2 is the simulator's own per-step gradient variance at x* (enumerated
    over groups), so only the dynamics are predicted; the peak position depends on k alone.
    """
    theory = _theory(config)
    cfg = replace(config, momentum=momentum)
    run = simulate_bandit(cfg, steps=steps + 512, seeds=seeds, seed=seed, x0=theory.x_star)
    e = run.x[512:] - run.x[512:].mean(axis=0)
    periodogram = np.abs(np.fft.rfft(e, axis=0)) ** 2 / (2 * np.pi * e.shape[0])
    observed = periodogram.mean(axis=1)[1:]
    omega = 2 * np.pi * np.fft.rfftfreq(e.shape[0])[1:]
    # per-group variance of the x-gradient at x*, by enumeration (KL part included)
    _, variance = group_update_moments(theory.x_star, cfg)
    s2 = cfg.lr**2 * variance / cfg.prompts
    k = cfg.lr * theory.kappa
    predicted = compiled("spectral_density")(omega, momentum, k, s2)
    smooth = np.convolve(observed, np.ones(9) / 9, mode="valid")  # 9-bin running mean
    top = int(np.argmax(smooth))
    # a resonance: the maximum lies inside and stands 10% above the lowest frequencies
    visible = 0 < top < smooth.size - 1 and smooth[top] > 1.1 * smooth[0]
    cos_peak = (1 + momentum - k) * (1 + momentum) / (4 * momentum) if momentum > 0 else 2.0
    peak_predicted = float(compiled("spectral_peak_frequency")(momentum, k)) \
        if abs(cos_peak) < 1 else None
    return SpectrumResult(momentum, k, omega.tolist(), observed.tolist(), predicted.tolist(),
                          float(omega[top + 4]) if visible else None, peak_predicted)


@dataclass(frozen=True)
class ThresholdResult:
    """A lag threshold: predicted from the measured stiffness against simulated runs."""

    kind: str  # "refresh", "staleness" or "num_iterations"
    momentum: float
    stiffness: float
    predicted: float  # first unstable lag (exact discrete theory; inf: none)
    continuum: float
    observed: float  # first lag at which the simulated runs lose stability (inf: none tried)
    lags: list[int]
    excursion: list[float]  # median over seeds of max |x - x*| in the last quarter, / kick

    @property
    def predicted_largest_stable(self) -> float:
        """Largest stable lag of the exact theory, one less than the first unstable lag.

        The quantity ``grpodyn predict`` reports as ``refresh_max`` / ``staleness_max``.
        """
        return self.predicted - 1

    def to_dict(self) -> dict:
        """Return the fields and the largest stable lag as a JSON-ready dict."""
        return {**asdict(self), "predicted_largest_stable": self.predicted_largest_stable}


def _unstable(config: BanditConfig, x_star: float, *, steps: int, seeds: int, seed: int,
              kick: float) -> tuple[bool, float]:
    """Tell whether a kick decays: median over seeds of max |x - x*| (last quarter) / kick."""
    run = simulate_bandit(config, steps=steps, seeds=seeds, seed=seed, x0=x_star + kick)
    tail = np.abs(run.x[3 * steps // 4:] - x_star)
    excursion = np.where(np.isfinite(tail), tail, np.inf).max(axis=0)
    ratio = float(np.median(excursion)) / kick
    return ratio > 1.0, ratio


@dataclass(frozen=True)
class ThresholdPlan:
    """A threshold experiment before its runs: the prediction and one task per lag.

    Each task is a picklable call of the simulator with its own seed, so the tasks of many plans
    can be pooled into one :func:`grpodyn.numerics.executor.run_tasks` call (local pool or Dask)
    and :func:`finish_threshold_experiment` gives the same result whatever ran them.
    """

    kind: str
    momentum: float
    stiffness: float
    predicted: float | None
    continuum: float
    lags: list[int]
    tasks: list[Callable[[], tuple[bool, float]]]
    costs: list[float]  # simulated steps x seeds per task


def plan_threshold_experiment(kind: str, config: BanditConfig = THRESHOLD_CONFIG, *,
                              momentum: float = 0.0, lags: list[int] | None = None,
                              seeds: int = 32,
                              cycles: int = 200, kick: float = 0.5, seed: int = 0
                              ) -> ThresholdPlan:
    """Plan the prediction and the simulator tasks of :func:`threshold_experiment`."""
    theory = _theory(config)
    base = replace(config, momentum=momentum, refresh=1, staleness=0, num_iterations=1)
    k = config.lr * theory.kappa
    if kind == "refresh":
        predicted = stability.first_unstable_refresh(momentum=momentum, stiffness=k)
        continuum = float(compiled("refresh_threshold_continuum")(momentum, k))
    elif kind == "staleness":
        d_max = stability.staleness_max(momentum=momentum, stiffness=k)
        predicted = None if d_max is None else d_max + 1
        continuum = float(np.ceil((1 - momentum) / k))
    elif kind == "num_iterations":
        try:
            predicted = stability.first_unstable_mixed_refresh(
                momentum=momentum, stiffness_current=config.lr * theory.kappa_current,
                stiffness_lagged=config.lr * theory.kappa_stale, cap=2000)
        except InputError:
            predicted = float("inf")  # no threshold: the reused force stays (almost) current
        continuum = float("nan")
    else:
        raise ValueError(f"kind must be refresh, staleness or num_iterations, got {kind!r}")
    if lags is None and not np.isfinite(predicted or 0.0):
        lags = [2, 4, 8, 16, 32, 64]
    if lags is None:
        centre = predicted if predicted is not None else 20
        lags = sorted({max(1, int(round(centre * f))) for f in (0.5, 0.7, 0.85, 0.95, 1.0,
                                                                 1.05, 1.15, 1.4)})
    lags = [int(v) for v in lags]
    tasks, costs = [], []
    for lag in lags:
        steps = int(cycles * max(lag, 10))
        tasks.append(partial(_unstable, replace(base, **{kind: lag}), theory.x_star,
                             steps=steps, seeds=seeds, seed=seed, kick=kick))
        costs.append(float(steps * seeds))
    return ThresholdPlan(kind, momentum, k, predicted, continuum, lags, tasks, costs)


def finish_threshold_experiment(plan: ThresholdPlan, outcomes: list[tuple[bool, float]]
                                ) -> ThresholdResult:
    """Return the result of a planned threshold experiment from its tasks' outcomes."""
    observed = next((float(lag) for lag, (bad, _) in zip(plan.lags, outcomes, strict=True)
                     if bad), float("inf"))
    return ThresholdResult(plan.kind, plan.momentum, plan.stiffness,
                           float("nan") if plan.predicted is None else float(plan.predicted),
                           plan.continuum, observed, list(plan.lags),
                           [ratio for _, ratio in outcomes])


def threshold_experiments(plans: list[ThresholdPlan], *, executor: Any = "auto",
                          progress: bool | None = None) -> list[ThresholdResult]:
    """Run the tasks of several planned threshold experiments together.

    One pool or cluster run, costliest first; the results come back in plan order.
    """
    tasks = [task for plan in plans for task in plan.tasks]
    costs = [cost for plan in plans for cost in plan.costs]
    outcomes = run_tasks(tasks, executor=executor, progress=progress, costs=costs,
                         description="threshold runs")
    return finish_threshold_experiments(plans, outcomes)


def finish_threshold_experiments(plans: list[ThresholdPlan], outcomes: list
                                 ) -> list[ThresholdResult]:
    """Return the results of several plans from the outcomes of their tasks.

    The outcomes are in plan order (plan 1's tasks, then plan 2's, ...); extra outcomes after
    the last plan are an error.
    """
    results, start = [], 0
    for plan in plans:
        results.append(finish_threshold_experiment(plan, outcomes[start:start + len(plan.tasks)]))
        start += len(plan.tasks)
    if start != len(outcomes):
        raise ValueError(f"{len(outcomes)} outcomes for {start} planned tasks")
    return results


def threshold_experiment(kind: str, config: BanditConfig = THRESHOLD_CONFIG, *,
                         momentum: float = 0.0, lags: list[int] | None = None, seeds: int = 32,
                         cycles: int = 200, kick: float = 0.5, seed: int = 0,
                         executor: Any = "serial",
                         progress: bool | None = None) -> ThresholdResult:
    """First unstable refresh interval / staleness / num_iterations, predicted and simulated.

    Each run starts ``kick`` logits away from x*. A lag counts as unstable when the kick has not
    decayed: the median over seeds of the largest excursion |x - x*| in the last quarter of the
    run exceeds the kick. Stable runs relax to their stationary spread (a fraction of the kick at
    the lab's noise level); just past the threshold an unstable run grows into a limit cycle,
    bounded by the sigmoid, that stays larger than the kick. The excursion ratios are returned so
    the criterion can be judged. Every lag is simulated (each with the same ``seed``);
    ``executor`` runs them (:func:`grpodyn.numerics.executor.run_tasks`): the result does not
    depend on it.
    """
    plan = plan_threshold_experiment(kind, config, momentum=momentum, lags=lags, seeds=seeds,
                                     cycles=cycles, kick=kick, seed=seed)
    return threshold_experiments([plan], executor=executor, progress=progress)[0]


@dataclass(frozen=True)
class GroupSizeResult:
    """Group-size invariance of the mean path and 1/G scaling of the fluctuations."""

    group_sizes: list[int]
    p_star: list[float]
    mean_path_max_deviation: list[float]  # from the largest G's mean path, in reward
    mean_path_seed_spread: list[float]  # 2 standard errors of the mean path, in reward
    variance_observed: list[float]
    variance_predicted: list[float]  # exact finite-G (AR(2) with Var[U] at p*)
    variance_one_over_g: list[float]  # leading 1/G scaling from the smallest G

    def to_dict(self) -> dict:
        """Return the fields as a JSON-ready dict."""
        return asdict(self)


def group_size_experiment(config: BanditConfig | None = None, *,
                          group_sizes: tuple[int, ...] = (2, 4, 8, 16, 64), seeds: int = 256,
                          path_steps: int = 150, stationary_steps: int = 3000,
                          seed: int = 0) -> GroupSizeResult:
    """Mean reward paths and stationary variance of x for several G.

    Default config: :data:`GROUP_CONFIG` (p* ~ 1/2, where the GRPO noise vanishes to first
    order); its group size is replaced by each of ``group_sizes``.
    """
    config = config or GROUP_CONFIG
    paths, p_stars, observed, predicted = [], [], [], []
    for g in group_sizes:
        cfg = replace(config, group_size=int(g))
        theory = _theory(cfg)
        run = simulate_bandit(cfg, steps=path_steps, seeds=seeds, seed=seed)
        paths.append(run.p)
        p_stars.append(theory.p_star)
        stationary = simulate_bandit(cfg, steps=stationary_steps, seeds=seeds, seed=seed + 1,
                                     x0=theory.x_star)
        observed.append(float(stationary.x[stationary_steps // 5:].var()))
        var_u = float(compiled("grpo_update_variance")(g, theory.p_star, cfg.eps)) \
            if cfg.estimator == "grpo" else \
            float(compiled(f"{cfg.estimator}_update_variance")(g, theory.p_star))
        s2 = cfg.lr**2 * var_u / cfg.prompts
        predicted.append(float(compiled("stationary_variance")(cfg.momentum,
                                                               cfg.lr * theory.kappa, s2)))
    reference = paths[-1].mean(axis=1)
    deviation = [float(np.abs(p.mean(axis=1) - reference).max()) for p in paths]
    spread = [float(2 * np.sqrt(p.var(axis=1) / p.shape[1]).max()) for p in paths]
    one_over_g = [observed[0] * group_sizes[0] / g for g in group_sizes]
    return GroupSizeResult([int(g) for g in group_sizes], p_stars, deviation, spread, observed,
                           predicted, one_over_g)


@dataclass(frozen=True)
class TrajectoryComparison:
    """Closed-form trajectory against the simulated mean path (reward), with and without inertia."""

    momentum: float
    r2_inertial: float
    r2_exponential: float
    steps: int

    def to_dict(self) -> dict:
        """Return the fields as a JSON-ready dict."""
        return asdict(self)


def trajectory_experiment(config: BanditConfig = DEFAULT_CONFIG, *,
                          momentum: float = TRAJECTORY_MOMENTUM,
                          kick: float = -0.5, steps: int = 200, seeds: int = 512,
                          seed: int = 0) -> TrajectoryComparison:
    """Compare the simulated mean reward after a kick with the closed form at the stiffness."""
    theory = _theory(config)
    cfg = replace(config, momentum=momentum)
    run = simulate_bandit(cfg, steps=steps, seeds=seeds, seed=seed, x0=theory.x_star + kick)
    observed = run.p.mean(axis=1)
    t = np.arange(steps + 1, dtype=float)
    k = cfg.lr * theory.kappa
    r0 = float(compiled("bandit_success_probability")(theory.x_star + kick))
    inertial = reward_trajectory(t, r0=r0, plateau=theory.p_star, momentum=momentum,
                                 stiffness=k).values
    tau = (1 - momentum) / k
    exponential = theory.p_star + (r0 - theory.p_star) * np.exp(-t / tau)
    total = np.sum((observed - observed.mean()) ** 2)

    def r2(model: np.ndarray) -> float:
        return float(1 - np.sum((observed - model) ** 2) / total)

    return TrajectoryComparison(momentum, r2(inertial), r2(exponential), steps)
