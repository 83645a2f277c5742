"""The burn-in route: the drift read after a burn-in at the segment's own lr.

Findings 10f (post hoc): a copy state made at lr 0.1 carries lr 0.1's fluctuation level; the first
20 steps at another lr re-equilibrate to that lr (the burn-in's change equals the segment drift
without one in all four measured cases), and segments read after a 20-step burn-in at their own
lr rise at the runs' pace. The route, designed on those seen data (studies/deepnet/findings.md 10g):

- Measurement (:func:`.relaxation.measure_drift_curve` with ``burn_in=BURN_IN``): at each state of
  the copy run (lr 0.1, seeds 700-709, a state every 30 steps to 300) and each lr to be
  predicted, ``repeats`` copies first run ``BURN_IN`` steps at that lr (seeds of their own from
  ``BURNIN_SEGMENT_SEED``), then a 20-step segment's change is read with common random numbers.
- Location (docs/theory.md sections 1 and 6: F(r) is the expected step at a given slow level, the
  fluctuation about the mean path averaged out): the segment's mid reward after the burn-in.
  After the burn-in the copies sit at the lr's own fluctuation level, not lr 0.1's; the mean over
  independent burn-ins averages their fluctuations out; the finite difference over the segment is
  centred on its midpoint. The state's own reward (lr 0.1's level) is not used.
- Drift: the weighted quadratic D(r) = a + b r + c r^2 through (mid reward, drift +- s.e.)
  (:func:`.relaxation.fit_drift`, no deviation regressor: the deviation the slow route regresses
  out is the copy state's, which the burn-in undoes).
- Start: the runs start at the warmed model, which is the copy run's state 0. Its burn-in at the
  lr to be predicted is the first ``BURN_IN`` steps of such a run (seeds of its own), measured;
  the predicted curve goes from the warmed model's reward (its evaluations before the burn-ins,
  all lrs pooled) linearly to state 0's mean reward after the burn-in at step ``BURN_IN``, and
  from there follows the mean-field map r_{n+1} = r_n + D(r_n) (:func:`burnin_curve`).
- Predictions: the fixed observation rule :func:`.sweeps.fit_relaxation` on that curve
  (``relaxation_time``) with its predicted ``path`` (60-step window means,
  :func:`.slow.path_windows`), and 1 / kappa at the stable root of D (``relaxation_time_late``),
  as the other routes (:func:`.relaxation.predict_relaxation`, ``route="burnin"``, setting
  ``runs: "relaxation_burnin"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BURN_IN", "BURNIN_SEGMENT_SEED", "run_start", "burnin_curve"]

BURN_IN = 20  # steps at the segment's lr before the segment: the fast time is <= 20 steps (10f)
BURNIN_SEGMENT_SEED = 50_000  # segments 51000-61104, burn-ins +500 (slow route: 31000-41604)


def run_start(measured: dict[str, Any], lr_key: str) -> dict[str, float]:
    """Return the start of a run at ``lr_key`` as the burn-in measurement at state 0 gives it.

    Parameters
    ----------
    measured : dict
        :func:`.relaxation.measure_drift_curve`'s record with ``burn_in`` >= 1; its points carry
        ``state_rewards`` (the state's own reward, one evaluation per repeat).
    lr_key : str
        The lr (a key of ``measured["drift"]``).

    Returns
    -------
    dict
        ``reward`` and ``reward_se``: the warmed model's reward (state 0's own evaluations, all
        lrs pooled; for a measurement without ``state_rewards``, the mean of each lr's state
        reward, reward after the burn-in less the mean burn-in change, with the s.e. of the
        reward after the burn-in); ``burned`` and ``burned_se``: state 0's mean reward after
        the burn-in at ``lr_key``; ``burn_in`` (steps).
    """
    burn_in = int(measured.get("burn_in", 0))
    if burn_in < 1:
        raise ValueError(f"the burnin route needs a measurement with a burn-in, got {burn_in}")
    firsts = {k: next((p for p in v if p["copy_step"] == 0), None)
              for k, v in measured["drift"].items()}
    if any(p is None for p in firsts.values()):
        raise ValueError("the burnin route needs the copy run's state 0 (copy_step 0) at each lr")
    first = firsts[lr_key]
    if all("state_rewards" in p for p in firsts.values()):
        own = np.concatenate([p["state_rewards"] for p in firsts.values()])
        r0, r0_se = float(own.mean()), float(own.std(ddof=1) / np.sqrt(own.size))
    else:  # the burn-in files of 10f kept each state reward's mean only
        own = np.array([p["reward"] - np.mean(p["burn_in_changes"]) for p in firsts.values()])
        r0, r0_se = float(own.mean()), float(first["reward_se"])
    return {"reward": r0, "reward_se": r0_se,
            "burned": float(first["reward"]), "burned_se": float(first["reward_se"]),
            "burn_in": burn_in}


def burnin_curve(coef: list[float], r0: float, burned: float, burn_in: int,
                 steps: int) -> np.ndarray:
    """Predicted reward curve: r0 to ``burned`` linearly over ``burn_in`` steps, then the map.

    Parameters
    ----------
    coef : list of float
        The quadratic drift (a, b, c), per step.
    r0, burned : float
        Reward at step 0 and at step ``burn_in`` (:func:`run_start`).
    burn_in, steps : int
        Steps of the burn-in and of the run (``steps`` values are returned).
    """
    from .relaxation import mean_field_curve

    if not 0 < burn_in < steps:
        raise ValueError(f"need 0 < burn_in < steps, got burn_in={burn_in}, steps={steps}")
    head = np.linspace(r0, burned, burn_in + 1)[:-1]
    return np.concatenate([head, mean_field_curve(coef, burned, steps - burn_in)])
