"""grpodyn: predictable GRPO training from a mean-field theory.

The public API, re-exported lazily (``import grpodyn`` loads neither sympy nor the layers)::

    import grpodyn
    grpodyn.predict(lr=0.01, momentum=0.9, kappa=1.0).regime       # 'oscillatory'
    run = grpodyn.load_run("trainer_state.json")
    grpodyn.fit_curve("exponential", run.steps, run.reward).params
    grpodyn.analyse_run(run).plateau                                 # with a status
    grpodyn.diagnose(run).primary                                    # failure mode or None
    grpodyn.diagnose("trainer_state.json").headline                  # a log's path also does
    monitor = grpodyn.Monitor(momentum=0.9)                          # for a training loop

Layers: ``grpodyn.theory`` (sympy derivations), ``grpodyn.numerics`` (compiled numerics, fits,
export), ``grpodyn.empirical`` (loaders, the bandit lab, real runs).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "predict": "grpodyn.numerics.predict",
    "trajectory": "grpodyn.numerics.trajectory",
    "reward_trajectory": "grpodyn.numerics.trajectory",
    "Trajectory": "grpodyn.numerics.trajectory_type",
    "Forecast": "grpodyn.numerics.forecast_result",
    "fit_curve": "grpodyn.numerics.fit",
    "CurveModel": "grpodyn.numerics.fit",
    "fit_models": "grpodyn.numerics.fit",
    "forecast_curve": "grpodyn.numerics.forecast",
    "estimate_noise": "grpodyn.numerics.fit",
    "compiled": "grpodyn.numerics.compiled",
    "regime": "grpodyn.numerics.stability",
    "first_unstable_refresh": "grpodyn.numerics.stability",
    "staleness_max": "grpodyn.numerics.stability",
    "stationary_variance": "grpodyn.numerics.fluctuations",
    "bandit_theory": "grpodyn.numerics.bandit",
    "load_run": "grpodyn.empirical.logs.loaders",
    "analyse_run": "grpodyn.analysis",
    "RunAnalysis": "grpodyn.empirical.logs.run_analysis",
    "diagnose": "grpodyn.analysis",
    "Monitor": "grpodyn.empirical.monitor",
    "MonitorState": "grpodyn.empirical.monitor",
    "BanditConfig": "grpodyn.empirical.bandit.simulation",
    "simulate_bandit": "grpodyn.empirical.bandit.simulation",
    "MeanFieldMap": "grpodyn.numerics.mean_field_map",
    "load_sweep_run": "grpodyn.empirical.logs.sweep",
    "fit_sweep": "grpodyn.empirical.logs.sweep",
    "transfer": "grpodyn.empirical.logs.sweep",
    "advise_log": "grpodyn.analysis",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'grpodyn' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__() -> list[str]:
    """Return the public names only: the API and the module's own dunders and version."""
    return sorted({*_EXPORTS, "__version__", *(n for n in globals() if n.startswith("__"))})
