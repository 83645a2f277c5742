"""Glue between loaded runs (empirical) and fits (numerics), shared by the CLI and the report."""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.empirical.loaders import Run
from grpodyn.numerics.fit import MODEL_NAMES, estimate_noise, fit_models, forecast

__all__ = ["learning_rate_of", "fit_run"]


def learning_rate_of(run: Run) -> np.ndarray | None:
    """The run's learning rate at every point (gaps interpolated); None if not logged or
    constant (then the learning-rate clock is the step clock and adds no model)."""
    lr = run.metrics.get("learning_rate")
    if lr is None:
        return None
    known = np.isfinite(lr)
    if not known.any() or np.ptp(lr[known]) == 0:
        return None
    return np.interp(run.steps, run.steps[known], lr[known])


def fit_run(run: Run, *, model: str = "all", momentum: float | None = None,
            train_fraction: float = 1.0) -> dict[str, Any]:
    """Fit the reward of ``run``; the JSON object of ``grpodyn fit``."""
    lr = learning_rate_of(run)
    names = MODEL_NAMES if model == "all" else (model,)
    fits = fit_models(run.steps, run.reward, models=names, momentum=momentum, learning_rate=lr)
    noise = estimate_noise(run.reward)
    models = {}
    for name, fit in fits.items():
        entry = fit.to_dict()
        entry["r2_of_explainable"] = (float(fit.r2 / noise.r2_ceiling)
                                      if noise.r2_ceiling > 0 else None)
        models[name] = entry
    best = min(fits, key=lambda name: fits[name].aic)
    result: dict[str, Any] = {
        "source": run.source, "format": run.format, "run": run.run_name,
        "reward_key": run.reward_key, "n_points": run.n_points,
        "steps_reconstructed": run.steps_reconstructed,
        "noise": {"sigma": noise.sigma, "r2_ceiling": noise.r2_ceiling, "method": noise.method},
        "models": models, "best": best, "warnings": list(run.warnings),
    }
    if train_fraction < 1:
        per_model = {name: forecast(name, run.steps, run.reward, train_fraction=train_fraction,
                                    momentum=momentum, learning_rate=lr).to_dict()
                     for name in fits}
        for name, scores in per_model.items():
            models[name]["forecast"] = scores
        result["forecast"] = per_model[best]
    return result


def curvature_from_run(run: Run, *, momentum: float, lr: float | None = None
                       ) -> dict[str, Any]:
    """Curvature scale kappa from a log: the fitted relaxation time tau gives the stiffness of
    the overdamped map, k = (1 - beta) / tau (THEORY.md section 4), and kappa = k / lr.

    ``lr``: default the last logged learning rate, or the ``lr`` found beside the log.
    """
    from grpodyn.numerics.fit import fit_curve
    from grpodyn.numerics.validation import InputError, check_momentum

    beta = float(check_momentum(momentum))
    if lr is None:
        logged = run.metrics.get("learning_rate")
        if logged is not None and np.isfinite(logged).any():
            lr = float(logged[np.isfinite(logged)][-1])
        elif isinstance(run.meta.value("lr"), (int, float)):
            lr = float(run.meta.value("lr"))
        else:
            raise InputError(f"{run.source}: no learning rate in the log; give --lr")
    if not (np.isfinite(lr) and lr > 0):
        raise InputError(f"lr must be positive, got {lr}")
    fit = fit_curve("exponential", run.steps, run.reward)
    k = (1.0 - beta) / fit.params["tau"]
    return {"kappa": k / lr, "stiffness": k, "tau": fit.params["tau"],
            "tau_stderr": fit.stderr["tau"], "lr": lr, "r_star": fit.params["r_star"]}
