"""The linear route: a drift with one stiffness, measured at three states with long segments.

Findings 10g: the burn-in route's drift has the runs' order of magnitude, but its shape is not
resolved (per-state s.e. about 1e-3 per step at 70k, as large as the runs' slopes), and a quadratic
through 11 such points invents roots and curvature. This route, designed on seen data only
(studies/deepnet/findings.md 10h: the burn-in measurements ``drift_burnin_<size>.json`` and
``drift_slow_burnin20_<size>.json`` and the runs of seeds 900-902 and 1000-1008), changes two
things and keeps the rest of :mod:`.burnin`:

- Drift form (docs/theory.md sections 1 and 3, the relaxation law): the weighted LINEAR drift
  D(r) = a + b r = kappa (r* - r), kappa = -b per step, r* = -a / b (:func:`fit_linear_drift`,
  :func:`.relaxation.weighted_fit`). One stiffness and one plateau: no invented root or
  curvature. tau = 1 / kappa; a fit with kappa <= 0 has no relaxation and predicts
  ``undetermined`` with the bound "beyond twice the run" (:func:`no_stiffness`).
- Measurement, at the burn-in route's cost: docs/theory.md section 6 makes the fluctuation a
stationary
  process about the mean path; on the seen burn-in data the s.d. over repeats of a 40-step change
  (burn-in and segment together) is 0.68-1.09 times that of the 20-step segment change and
  0.65-1.72 times (median 1.1) that of the 20-step burn-in change from the same fixed state,
  against sqrt(2) = 1.41 for a diffusive spread (eight size x lr cases; ``relaxation-diagnosis
  --route linear``, part ``segment_spread``): the change's spread is mostly the end points'
  fluctuation, not the segment's length, so the drift's s.e. falls nearly as 1 / segment.
  Segments of ``LINEAR_SEGMENT`` = 60 steps after
  the ``BURN_IN`` = 20-step burn-in at the segment's lr, at ``LINEAR_STATES`` (copy steps 0, 150,
  300 of the copy run of findings 10e: lr 0.1, seeds 700-709; the ends fix the slope, the middle
  checks the line), ``LINEAR_REPEATS`` = 12 repeats: 36 repeats of 3 evaluations + 80 steps per lr
  (about 4.8 s each at 70k) against the burn-in route's 55 of 3 evaluations + 40 steps (3.1 s).
  Each drift is located at the segment's mid reward after the burn-in (as :mod:`.burnin`).
- Start and curve: :func:`.burnin.run_start` and :func:`.burnin.burnin_curve` (the measured burn-in
  at state 0 from the warmed model's reward, then r_{n+1} = r_n + D(r_n)).

Predictions (:func:`.relaxation.predict_relaxation` with ``route="linear"``, setting ``runs:
"relaxation_linear"``): ``relaxation_time``, the fixed observation rule
:func:`.sweeps.fit_relaxation` on the predicted curve (300 steps), parametric-bootstrap 68 %
interval over (a, b), the start and the burn-in reward, with the 60-step ``path``
(:func:`.slow.path_windows`); ``relaxation_time_late``, 1 / kappa at r*.

Judging rule, fixed with this code before any measurement at the settings it predicts: the
observed relaxation time is the same fixed rule (:func:`.sweeps.fit_relaxation`) on the seed-mean
reward curve of NINE new seeds per setting (1100-1108), 300 steps, momentum 0
(:func:`.relaxation.observe_relaxation`); ``relaxation_time`` is met when within 25 % of it
(:func:`.relaxation.join_relaxation`, with its lower-bound clause for an observation beyond twice
the run; both beyond twice the run is not counted); the path is met when every 60-step window of
the predicted curve is within 25 % of the seed-mean window (:func:`.slow.path_within`). The
target (two settings per size within 25 %) is judged on ``relaxation_time``; the path is reported
beside it.

The long variant (``route="long"``, files ``_long``; findings 10i), designed on seen data only
(findings 10h's design note: over 300 steps the runs cover a tenth to a half of the way to the
plateau, so tau is the curvature of a nearly straight piece, and the states at copy steps 0, 150,
300 span too little r for the slope): the same drift form, burn-in, segments and repeats, with
two parameters changed. (i) The copy run is ``LONG_COPY_STEPS`` = 600 steps (lr 0.1, segments of
30 steps with seeds 700-719: its first 300 steps are 10h's copy run) and the states are
``LONG_STATES`` (copy steps 0, 300, 600), segments with seeds from ``LONG_SEGMENT_SEED`` on.
(ii) The runs and the fixed observation rule cover 600 steps (``undetermined`` beyond 1200).
Judging rule, fixed with this code before any measurement at the settings it predicts: the fixed
rule :func:`.sweeps.fit_relaxation` on the seed-mean reward curve of NINE new seeds per setting
(1200-1208), 600 steps, momentum 0; ``relaxation_time`` met when within 25 % (the clauses of
:func:`.relaxation.join_relaxation`); the path met when every 60-step window (ten of them) is
within 25 % of the seed-mean window.

The precise variant (``route="precise"``, files ``_precise``; findings 10j), designed on seen
data only (the long variant's measurement ``drift_long_<size>.json`` and its runs, seeds
1200-1208): findings 10i's post hoc reading puts the relaxation-time misses on the slope of the
drift, whose s.e. with 12 repeats is 30-70 % of kappa. The error budget (seen data): for a tau
within 25 % the slope must be known to about 15 %; with the long variant's per-state s.e. at 70k
(0.19-0.52 x 1e-3 per step over states spanning r 0.12-0.48) kappa's s.e. is 0.0013 at lr 0.0875,
against 15 % of the observed 1 / 325 = 0.00046, so (0.0013 / 0.00046)^2 x 12 = 96-102 repeats
per state; at 330k it is 230-460 (2-4 hours of one core per lr), beyond this machine, so the
variant is run at 70k only. The long variant unchanged (the 600-step copy run, states at copy
steps 0, 300, 600, 20-step burn-in, 60-step segments, the linear drift, 600-step runs and rule)
except (i) ``PRECISE_REPEATS`` = 96 repeats per state and lr (8 x 12: the s.e. 2.8x smaller) and
(ii) segment seeds from ``PRECISE_SEGMENT_SEED`` on (201000-221195, burn-ins +500). Judging rule,
fixed with this code before any measurement at the settings it predicts: the fixed rule
:func:`.sweeps.fit_relaxation` on the seed-mean reward curve of NINE new seeds per setting
(1300-1308), 600 steps, momentum 0; ``relaxation_time`` met when within 25 % (the clauses of
:func:`.relaxation.join_relaxation`); the path met when every 60-step window (ten of them) is
within 25 % of the seed-mean window. Settings: lr 0.08 and 0.095 (never run), in the range where
the seen 70k runs relax without stalls (lr 0.0875: no seed stalled; lr 0.1125: two of nine fell
between windows; lr 0.14: two of nine stalled for 480-540 steps).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LINEAR_SEGMENT", "LINEAR_STATES", "LINEAR_REPEATS", "LINEAR_SEGMENT_SEED",
           "LONG_COPY_STEPS", "LONG_STATES", "LONG_SEGMENT_SEED", "PRECISE_REPEATS",
           "PRECISE_SEGMENT_SEED", "fit_linear_drift", "no_stiffness"]

LINEAR_SEGMENT = 60  # steps per segment after the burn-in (the burn-in route: 20)
LINEAR_STATES = (0, 150, 300)  # copy steps measured (the copy run's first, middle, last state)
LINEAR_REPEATS = 12  # repeats per state and lr: the burn-in route's cost (module docstring)
LINEAR_SEGMENT_SEED = 70_000  # segments 71000-81111, burn-ins +500 (burn-in route: 51000-61604)
LONG_COPY_STEPS = 600  # the long variant's copy run (lr 0.1, every 30 steps, seeds 700-719)
LONG_STATES = (0, 300, 600)  # the long variant: the 600-step copy run's first, middle, last
LONG_SEGMENT_SEED = 100_000  # the long variant's segments 101000-121111, burn-ins +500
PRECISE_REPEATS = 96  # the precise variant's repeats per state and lr (module docstring)
PRECISE_SEGMENT_SEED = 200_000  # the precise variant's segments 201000-221195, burn-ins +500


def fit_linear_drift(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Weighted least squares D(r) = a + b r through (reward_mid, drift +- drift_se).

    Parameters
    ----------
    points : list of dict
        :func:`.relaxation.segment_drift` records: ``reward_mid`` (reward, in [0, 1]), ``drift``
        and ``drift_se`` (reward per step).

    Returns
    -------
    dict
        ``coef`` (a, b, 0.0) per step, in the quadratic form the mean-field curve takes, and
        ``cov`` (3 x 3, zero for the absent quadratic term; scaled by the reduced chi-square when
        above 1), ``kappa`` = -b with ``kappa_se`` (per step), ``plateau`` r* = -a / b (None when
        b = 0), ``reduced_chi2`` and ``r_range``.
    """
    if len(points) < 3:
        raise ValueError(f"a linear drift with a check of the line needs at least 3 points, "
                         f"got {len(points)}")
    from .relaxation import weighted_fit

    r = np.array([p["reward_mid"] for p in points], dtype=float)
    coef, cov, chi2 = weighted_fit(np.vstack([np.ones_like(r), r]).T,
                                   np.array([p["drift"] for p in points], dtype=float),
                                   np.array([p["drift_se"] for p in points], dtype=float))
    full = np.zeros((3, 3))
    full[:2, :2] = cov
    return {"coef": [float(coef[0]), float(coef[1]), 0.0], "cov": full.tolist(),
            "kappa": float(-coef[1]), "kappa_se": float(np.sqrt(cov[1, 1])),
            "plateau": float(-coef[0] / coef[1]) if coef[1] != 0 else None,
            "reduced_chi2": chi2, "r_range": [float(r.min()), float(r.max())]}


def no_stiffness(coef: list[float]) -> bool:
    """Say whether a linear drift (a, b, ...) has no positive stiffness (kappa = -b <= 0)."""
    return not coef[1] < 0
