"""grpodyn.numerics: the theory compiled to fast numeric functions.

The public numeric names are re-exported lazily (``import grpodyn.numerics`` loads none of the
modules below, nor sympy)::

    from grpodyn.numerics import MeanFieldMap, fit_curve, forecast_curve, regime

``predict``, ``trajectory`` and ``compiled`` are also the names of submodules, which the import
system binds on this package once they are loaded: reach those functions as
``grpodyn.predict``, ``grpodyn.trajectory`` and ``grpodyn.compiled``, or from their submodules
(``from grpodyn.numerics.predict import predict``).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the submodule (of this package) that defines it
_EXPORTS = {
    "reward_trajectory": "trajectory",
    "Trajectory": "trajectory_type",
    "Forecast": "forecast_result",
    "fit_curve": "fit",
    "CurveModel": "fit",
    "fit_models": "fit",
    "forecast_curve": "forecast",
    "estimate_noise": "fit",
    "regime": "stability",
    "first_unstable_refresh": "stability",
    "staleness_max": "stability",
    "stationary_variance": "fluctuations",
    "bandit_theory": "bandit",
    "MeanFieldMap": "mean_field_map",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    """Return the re-exported names and the module's own dunders."""
    return sorted({*_EXPORTS, *(n for n in globals() if n.startswith("__"))})
