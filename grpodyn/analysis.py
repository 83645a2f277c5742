"""``fit_run``: the JSON object of ``grpodyn fit``, kept for scripts and notebooks.

The analysis itself lives in :func:`grpodyn.empirical.logs.run_analysis.analyse_run`; this is a
thin wrapper that makes its dict strict JSON.
"""

from __future__ import annotations

from typing import Any

from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import FIT_MODELS, analyse_run
from grpodyn.ground import finite_json

__all__ = ["fit_run"]


def fit_run(run: Run, *, model: str = "all", momentum: float | None = None,
            train_fraction: float = 1.0,
            reward_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """Fit the reward of ``run`` (and forecast the part after ``train_fraction`` when < 1)."""
    analysis = analyse_run(run, momentum=momentum, reward_range=reward_range,
                           train_fraction=train_fraction if train_fraction < 1 else None,
                           models=FIT_MODELS if model == "all" else (model,),
                           diagnose_run=False)
    return finite_json(analysis.to_dict())
