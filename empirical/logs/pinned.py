"""A reward pinned at one value: its plateau is that value, and so is its forecast's point.

A reward identical over the last half of the points read (the diagnosis's pinned state,
:func:`~grpodyn.empirical.diagnostics.state.pinned_value`) leaves every group without spread,
so no gradient moves it (docs/theory.md section 7). The curve models and the learned paths,
fitted to a run that moved before it pinned, settle near the value but not on it (a plateau of
-1.001 [-1.001, -1.0000004] for a reward at -1 over 100 points), and the forecast's point
drifts below every logged value. Needs numpy.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.state import pinned_value
from grpodyn.numerics.forecast import Forecast

__all__ = ["pinned_plateau", "held_if_pinned"]


def pinned_plateau(reward: np.ndarray) -> dict[str, Any] | None:
    """Return the plateau of a pinned reward (the value, determined), or None where it moves.

    Parameters
    ----------
    reward : ndarray
        The reward of the points fitted [reward].

    Returns
    -------
    dict or None
        The plateau entry of ``grpodyn fit`` (``value``, ``lower``, ``upper`` all the pinned
        value, ``status`` "determined", ``reason``, ``model`` "pinned").
    """
    value = pinned_value(reward)
    if value is None:
        return None
    return {"value": value, "lower": value, "upper": value, "status": "determined",
            "reason": f"the reward is pinned at {value:g} over the last half of the points "
                      "fitted: no group has spread, so no gradient moves it",
            "model": "pinned"}


def held_if_pinned(result: Forecast, trained: np.ndarray) -> Forecast:
    """Hold the point at the value a reward pinned before the cut sits at.

    The band is kept (the run may start moving again) and widened to hold the value.

    Parameters
    ----------
    result : Forecast
        A forecaster's forecast past the cut.
    trained : ndarray
        The reward before the cut [reward].

    Returns
    -------
    Forecast
        ``result`` itself where the reward before the cut is not pinned; otherwise with the
        point at the value (``point_weights`` {"pinned": 1}) and a warning that says why.
    """
    value = pinned_value(trained)
    if value is None:
        return result
    return replace(result, point=np.full(result.steps.size, value),
                   lower=np.minimum(result.lower, value), upper=np.maximum(result.upper, value),
                   point_weights={"pinned": 1.0}, warnings=(*result.warnings, (
                       f"the reward is pinned at {value:g} over the training part's last half: "
                       "a constant reward leaves no group with spread, so no gradient moves it; "
                       "the point holds it, the band says how far it could move if it restarts")))
