"""The bandit lab as ``grpodyn report`` runs it: start the simulations, collect, draw, check.

:func:`start_bandit_lab` starts every experiment as seeded tasks and returns at once;
:func:`finish_bandit_lab` waits for them, draws the lab's figures and returns the results the
claims of the bandit lab (:mod:`grpodyn.theory.claims.registry`, docs/theory.md section 8) are
checked on, by the ``*_claim`` functions of this module.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.ground import save_figure
from grpodyn.theory.claims import Check, Claim

__all__ = ["start_bandit_lab", "finish_bandit_lab", "stiffness_claim", "transition_claim",
           "threshold_claim", "reuse_claim", "group_variance_claim", "resonance_claim",
           "trajectory_claim"]


def start_bandit_lab(*, quick: bool, executor: Any = "auto", bar: bool | None = None,
                     say: Callable[[str], None] = lambda message: None) -> dict[str, Any]:
    """Start the bandit lab's simulations and return at once (the caller's process stays free).

    Every experiment, and every lag of the threshold experiments, is one seeded task; they run
    together through :func:`grpodyn.numerics.executor.start_tasks`, with results independent
    of the executor.

    Parameters
    ----------
    quick : bool
        Fewer seeds and lags (a smoke test, not the figures).
    executor : object
        A local process pool by default (``"auto"``), ``"serial"``, or a Dask scheduler.
    bar : bool, optional
        A progress bar (None: on a terminal).
    say : callable
        Receives one line about the executor.

    Returns
    -------
    dict
        The state to pass to :func:`finish_bandit_lab`.
    """
    from grpodyn.empirical.bandit import lab
    from grpodyn.numerics import stability
    from grpodyn.numerics.bandit import bandit_theory
    from grpodyn.numerics.executor import describe_executor, start_tasks

    seeds = 8 if quick else 32
    momenta = (0.0, 0.5, 0.9)
    k = lab.THRESHOLD_CONFIG.lr * bandit_theory(
        group_size=lab.THRESHOLD_CONFIG.group_size, kl=lab.THRESHOLD_CONFIG.kl,
        kl_estimator=lab.THRESHOLD_CONFIG.kl_estimator).kappa
    plans = []
    for kind in ("refresh", "staleness", "num_iterations"):
        for beta in momenta:
            lags = None
            if quick and kind == "refresh":
                first = stability.first_unstable_refresh(momentum=beta, stiffness=k)
                lags = [max(1, first - 1), first]
            elif quick and kind == "staleness":
                first = stability.staleness_max(momentum=beta, stiffness=k) + 1
                lags = [max(1, first - 1), first]
            elif quick:
                lags = [8, 32]
            plans.append(lab.plan_threshold_experiment(kind, momentum=beta, lags=lags,
                                                       seeds=seeds))
    # the other experiments, one task each, with rough costs (binomial draws) for the pool
    group_sizes = (2, 8, 64) if quick else (2, 4, 8, 16, 64)
    group_seeds, stationary_steps = (64, 1500) if quick else (256, 3000)
    stiffness_seeds = 50_000 if quick else 400_000
    spectrum_seeds = 32 if quick else 128
    trajectory_seeds = 128 if quick else 512
    others = [
        (partial(lab.measure_stiffness, seeds=stiffness_seeds), 8.0 * stiffness_seeds),
        (partial(lab.transition_experiment, steps=1500 if quick else 3000), 3e6),
        *((partial(lab.spectrum_experiment, momentum=b, seeds=spectrum_seeds),
           4.0 * 4608 * spectrum_seeds) for b in (0.9, 0.5)),
        (partial(lab.group_size_experiment, group_sizes=group_sizes, seeds=group_seeds,
                 stationary_steps=stationary_steps),
         4.0 * group_seeds * (150 + stationary_steps) * len(group_sizes)),
        *((partial(lab.trajectory_experiment, momentum=b, seeds=trajectory_seeds),
           4.0 * 200 * trajectory_seeds) for b in (0.0, 0.8)),
    ]
    prompts = lab.THRESHOLD_CONFIG.prompts
    tasks = [task for task, _ in others] + [task for plan in plans for task in plan.tasks]
    costs = [cost for _, cost in others] + [cost * prompts for plan in plans
                                            for cost in plan.costs]
    say(f"bandit lab: {len(tasks)} tasks on {describe_executor(executor, len(tasks))}")
    pending = start_tasks(tasks, executor=executor, costs=costs, description="bandit lab",
                          progress=bar)
    return {"pending": pending, "plans": plans, "others": len(others)}


def finish_bandit_lab(out: Path, lab_state: dict[str, Any]
                      ) -> tuple[dict[str, Any], list[tuple[str, str]], dict[str, Any]]:
    """Wait for the lab started by :func:`start_bandit_lab`; draw its figures into ``out``.

    Parameters
    ----------
    out : Path
        The report's folder.
    lab_state : dict
        What :func:`start_bandit_lab` returned.

    Returns
    -------
    tuple
        The results the claims are checked on, the figures (file name, caption) and the raw
        numbers (JSON-ready).
    """
    from grpodyn.empirical.bandit import lab, plots

    results = lab_state["pending"].results()
    stiffness, transition, *spectra = results[:4]
    spectra, group, trajectories = spectra[:2], results[4], results[5:7]
    outcomes = results[lab_state["others"]:]
    thresholds: dict[str, list] = {}
    for plan, result in zip(lab_state["plans"],
                            lab.finish_threshold_experiments(lab_state["plans"], outcomes),
                            strict=True):
        thresholds.setdefault(plan.kind, []).append(result)
    figures = []
    for name, caption, fig in [
        ("bandit_stiffness.png", "Curvature scale measured three ways.",
         plots.plot_stiffness(stiffness)),
        ("bandit_transition.png", "Overshoot after a kick against the momentum.",
         plots.plot_transition(transition)),
        ("bandit_spectrum.png", "Spectrum of stationary fluctuations against the AR(2) "
         "prediction.", plots.plot_spectrum(spectra)),
        ("bandit_refresh.png", "Refresh-interval threshold (sample-and-hold).",
         plots.plot_thresholds(thresholds["refresh"])),
        ("bandit_staleness.png", "Fixed-staleness threshold.",
         plots.plot_thresholds(thresholds["staleness"])),
        ("bandit_group_size.png", "Stationary variance against the group size.",
         plots.plot_group_size(group)),
    ]:
        save_figure(fig, out / name)
        figures.append((name, caption))
    raw = {"stiffness": stiffness.to_dict(), "transition": transition.to_dict(),
           "thresholds": {k: [r.to_dict() for r in v] for k, v in thresholds.items()},
           "group": group.to_dict(), "trajectories": [t.to_dict() for t in trajectories],
           "spectra": [{k: v for k, v in s.to_dict().items()
                        if k not in ("frequencies", "observed", "predicted")} for s in spectra]}
    data = {"stiffness": stiffness, "transition": transition, "thresholds": thresholds,
            "group": group, "spectra": spectra, "trajectories": trajectories}
    return data, figures, raw


def stiffness_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check that kappa measured three ways agrees (relative spread, docs/theory.md section 8)."""
    s = data["stiffness"]
    return [claim.row(f"{s.analytic:.5f} / {s.finite_difference:.5f} / {s.relaxation:.5f} "
                      f"(spread {100 * s.max_relative_spread:.2f}%)",
                      s.max_relative_spread < claim.values["spread"])]


def transition_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check the momentum of the overdamped -> oscillatory transition (sections 4, 8)."""
    t = data["transition"]
    return [claim.row(f"predicted {t.predicted_momentum:.4f}, observed "
                      f"{t.observed_momentum:.4f}", t.relative_error < claim.values["relative"])]


def threshold_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check each simulated first unstable lag against the exact threshold (section 5)."""
    v = claim.values
    return [claim.row(f"predicted {r.predicted:g}, observed {r.observed:g}",
                      abs(r.observed - r.predicted) <= max(v["steps"],
                                                           v["relative"] * r.predicted),
                      subject=f"{r.momentum}")
            for r in data["thresholds"][v["kind"]]]


def reuse_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check that importance-corrected reuse never destabilises the simulated runs."""
    return [claim.row(f"predicted {r.predicted:g}, observed {r.observed:g} "
                      f"(largest reuse tried {max(r.lags)})", not np.isfinite(r.observed),
                      subject=f"{r.momentum}")
            for r in data["thresholds"]["num_iterations"]]


def group_variance_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check the stationary variance against the exact finite-G prediction (sections 6, 7)."""
    g = data["group"]
    worst = max(abs(o / p - 1) for o, p in zip(g.variance_observed, g.variance_predicted,
                                                 strict=True))
    return [claim.row(f"largest deviation {100 * worst:.1f}% over G = {g.group_sizes}",
                      worst < claim.values["relative"])]


def resonance_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check the spectral peak of the stationary fluctuations at momentum 0.9 (section 6)."""
    s = data["spectra"][0]
    observed = "none" if s.peak_observed is None else f"{s.peak_observed:.4f}"
    return [claim.row(f"observed {observed}, predicted {s.peak_predicted:.4f}",
                      s.peak_observed is not None
                      and abs(s.peak_observed / s.peak_predicted - 1) < claim.values["relative"])]


def trajectory_claim(claim: Claim, data: dict[str, Any]) -> list[Check]:
    """Check the closed-form trajectory against the simulated mean reward (R^2, section 2)."""
    return [claim.row(f"inertial {t.r2_inertial:.4f}, exponential {t.r2_exponential:.4f}",
                      t.r2_inertial > claim.values["r2"], subject=f"{t.momentum}")
            for t in data["trajectories"]]
