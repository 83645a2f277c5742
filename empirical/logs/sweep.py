"""Sweeps: runs of one model and task, each with its own hyperparameters, fitted jointly.

Every run follows the mean-field map of its own hyperparameters (docs/theory.md sections 1, 3, 7 and
9, :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap`) with constants shared by the sweep:

    r_i(n) = r* + e_i(n),   e_i(0) = r0_s(i) - r*,
    e_{n+1} = e_n - s_n M_n,   M_n = beta M_{n-1} + w f_i(e_n) e_n,
    SGD:  k_i = lr_i kappa D(G_i, p)          (derivation ``sgd_stiffness_finite_group``)
    Adam: k_i = lr_i (1 - beta1) kappa_A sqrt(D / (D + rho_A / (B_i G_i)))
                                              (derivation ``adam_stiffness_finite_group``)

with D(G, p) = 1 - p^G - (1-p)^G the share of groups with an advantage at the mean-field reward
p = r* + e (``finite_group_drift_factor``; ``fit_sweep(finite_group=False)`` sets D = 1, the
large-G map). Runs of one seed start from the same weights and share an r0 (one r0 per seed when
the runs name their seeds, one for all otherwise).

The sampling noise acts on the mean path too: the step variance is split into
a between-prompt part sigma_p^2 / B and a within-group part sigma_c^2 / (B G)
(``sampling_variance_split``); the noise costs expected reward at second order, a drag
e_{n+1} = ... - drag_i per step (``sgd_noise_drag``: lr^2 h (sigma_p^2/B + sigma_c^2/(B G)) /
(2 (1 - beta^2)); ``adam_noise_drag``) that lowers the plateau like lr / B; and Adam's v_hat
carries both parts (``adam_stiffness_split``: rho_p / B + rho_A / (B G)). ``fit_sweep``'s
``noise_drag``, ``prompt_noise`` and ``plateau="per_seed"`` (an r* per seed) switch them on.

The shared constants (r0 per seed, r* per optimizer, kappa for SGD, kappa_A and rho_A for Adam)
are fitted by least squares over every point of every run that did not collapse; their covariance
is the cluster-robust sandwich with one cluster per run (points of a run are correlated, runs are
not). A per-setting fit (k free for each hyperparameter setting, r0 and r* held at the joint
values) gives the measured tau-lr exponent and the test of G-invariance against B G dependence.
:func:`transfer` predicts a setting not yet run: the mean path of its map with the fitted
constants, and a band that carries the constants' uncertainty, the seed-to-seed spread of the
source runs (and of r0 when the target's seed is not among the sources') and the per-step
sampling noise of the target's B and G. The tau-lr and B G exponents it carries the map with are
first compared with what the sources measure (:mod:`~grpodyn.empirical.logs.sweep_exponents`):
the law where the sources cannot tell, the measurement where it is precise, and the nearest
source with a band that covers the sources' spread where the measurement contradicts the law.

The band also carries the error of the map itself when it carries the fit to a setting away
from the sources: a variance s d^2 (m(n) - m(0))^2 with d = :func:`setting_distance` (target,
nearest source setting) in log-hyperparameter space and s calibrated by leave-one-setting-out on
the sources (:func:`transfer_error`); with a single source setting it cannot be calibrated and
the band goes without that term, with a warning.

Where source runs share the target's seed and batch size B, :func:`transfer` conditions on the
prompts they drew: a trainer that draws its prompts from a seeded sampler gives every run of one
seed and one B the same prompts at each step, so their deviations from their smoothed paths
carry the target's between-prompt noise. The mean path gains the predicted share of it and the
band keeps only the rest (:mod:`~grpodyn.empirical.logs.sweep_shared`); a target of another seed
or B, or one that names neither, is not conditioned, nor is one whose sources show no shared
prompt noise.
"""

from __future__ import annotations

from grpodyn.empirical.logs.sweep_fit import SweepFit, fit_sweep
from grpodyn.empirical.logs.sweep_runs import (
    HPARAM_KEYS,
    SweepRun,
    collapsed,
    load_sweep_run,
    parse_hparams,
)
from grpodyn.empirical.logs.sweep_transfer import setting_distance, transfer, transfer_error

__all__ = ["HPARAM_KEYS", "SweepRun", "SweepFit", "parse_hparams", "load_sweep_run",
           "fit_sweep", "transfer", "transfer_error", "setting_distance", "collapsed"]
