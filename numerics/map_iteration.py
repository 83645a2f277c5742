"""Iterate the mean-field map with a learning-rate schedule, many runs at once.

The map in momentum-buffer form (docs/theory.md section 1), M_n = beta M_{n-1} + w (f_n + eta_n),
e_{n+1} = e_n - s_n M_n - drag_n, with the force f_n = e_{n-l(n)} (times the finite-G drift
factor of section 9 where asked), a white noise eta_n on the force (section 6) where asked, and
the step s_n of the learning-rate schedule (:func:`lr_schedule`).
:class:`~grpodyn.numerics.mean_field_map.MeanFieldMap` builds its paths and bands here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from grpodyn.ground import InputError, check_int, check_positive

from .compiled import compiled

__all__ = ["SCHEDULES", "lr_schedule", "iterate_map", "drift_factor", "drift_factor_of"]

SCHEDULES = ("constant", "linear", "cosine")


def lr_schedule(lr: float, steps: int, *, schedule: str = "constant", warmup: int = 0,
                planned_steps: int | None = None) -> np.ndarray:
    """Return the learning rate of steps 0 .. steps-1.

    Hugging Face schedules: a linear warm-up from 0 over ``warmup`` steps, then constant, linear
    decay to 0, or cosine decay to 0 at the run's planned end (TRL's ``max_steps``).

    Parameters
    ----------
    lr : float
        Peak learning rate.
    steps : int
        Number of steps.
    schedule : {"constant", "linear", "cosine"}
        Decay after the warm-up.
    warmup : int
        Linear warm-up steps.
    planned_steps : int, optional
        The steps the run is set to take, where a decay reaches 0 (0 after it); default
        ``steps``: the decay is then shaped to the steps asked for. No effect on ``constant``.

    Returns
    -------
    numpy.ndarray
        ``steps`` learning rates.
    """
    if schedule not in SCHEDULES:
        raise InputError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    steps = check_int("steps", steps, minimum=1)
    warmup = check_int("warmup", warmup, minimum=0)
    planned = steps if planned_steps is None else check_int("planned_steps", planned_steps,
                                                              minimum=1)
    n = np.arange(steps, dtype=float)
    factor = np.ones(steps)
    if warmup:
        factor = np.where(n < warmup, n / warmup, 1.0)
    if schedule != "constant":
        progress = np.clip((n - warmup) / max(planned - warmup, 1), 0.0, 1.0)
        decay = 1.0 - progress if schedule == "linear" else 0.5 * (1 + np.cos(np.pi * progress))
        factor = np.where(n < warmup, factor, decay)
    return float(lr) * factor


def iterate_map(*, momentum: float, scale: np.ndarray, e0: np.ndarray, steps: int,
                weight: float = 1.0, bias_correction: bool = False, staleness: int = 0,
                refresh: int = 1,
                force_factor: Callable[[np.ndarray], np.ndarray] | None = None,
                drag: np.ndarray | None = None, force_noise: float = 0.0,
                seed: int | None = 0) -> np.ndarray:
    """Return the mean-field map in momentum-buffer form, many runs at once.

    Parameters
    ----------
    momentum : float
        beta (heavy-ball momentum or Adam's beta1).
    scale : numpy.ndarray
        s_n [1/step]: shape (runs,) for a constant step or (runs, steps) for a schedule.
    e0 : numpy.ndarray
        Initial displacements r0 - r* [reward], shape (runs,).
    weight : float
        w: 1 for heavy-ball SGD, 1 - beta1 for Adam.
    bias_correction : bool
        Divide the buffer by 1 - beta^(n+1) (Adam's m_hat).
    staleness, refresh : int
        Fixed force lag d, or refresh interval K with sample-and-hold (docs/theory.md section 1).
    force_factor : callable, optional
        f(e) -> factor on the force of each run, given the lagged displacements (shape (runs,)):
        a state-dependent stiffness, e.g. the finite-G drift factor 1 - p^G - (1-p)^G at
        p = r* + e (derivation ``finite_group_drift_factor``, docs/theory.md section 9). The map is
        then nonlinear and e_n / e_0 depends on e_0.
    drag : numpy.ndarray, optional
        Reward lost per step to the sampling noise [reward/step], shape (runs,) or (runs, steps)
        (derivations ``sgd_noise_drag``, ``adam_noise_drag``): e_{n+1} = e_n - s_n M_n - drag_n.
    force_noise : float
        Standard deviation sigma_f [reward] of a white Gaussian noise eta_n added to each run's
        force every step (the sampling noise of the gradient, docs/theory.md section 6), so that
        e_{n+1} gets a kick of standard deviation s_n w sigma_f: it follows the schedule and
        Adam's bias correction as the force does. 0: the deterministic map.
    seed : int or None
        Seed of the noise generator (one standard normal per run and step, drawn in step
        order, as :func:`~grpodyn.numerics.simulate.simulate_map` draws them).

    Returns
    -------
    numpy.ndarray
        e_n for n = 0 .. steps, shape (runs, steps + 1).
    """
    e0 = np.atleast_1d(np.asarray(e0, dtype=float))
    force_noise = float(check_positive("force_noise", force_noise, allow_zero=True, scalar=True))
    rng = np.random.default_rng(seed) if force_noise > 0 else None
    scale = np.asarray(scale, dtype=float)
    per_step = scale.ndim == 2
    e = np.empty((e0.size, steps + 1))
    e[:, 0] = e0
    buffer = np.zeros(e0.size)
    drag = None if drag is None else np.asarray(drag, dtype=float)
    drag_per_step = drag is not None and drag.ndim == 2
    with np.errstate(over="ignore", invalid="ignore"):
        for n in range(steps):
            lagged = e[:, n - n % refresh] if refresh > 1 else e[:, max(n - staleness, 0)]
            force = lagged if force_factor is None else force_factor(lagged) * lagged
            if rng is not None:  # drawn as simulate_map draws its kicks: e_{n+1} gets +s_n w z_n
                force = force - force_noise * rng.standard_normal(e0.size)
            buffer = momentum * buffer + weight * force
            s = scale[:, n] if per_step else scale
            if bias_correction:
                s = s / (1.0 - momentum ** (n + 1))
            e[:, n + 1] = e[:, n] - s * buffer
            if drag is not None:
                e[:, n + 1] -= drag[:, n] if drag_per_step else drag
    return e


def drift_factor(reward: np.ndarray, *, optimizer: str, group_size: np.ndarray,
                 batch: np.ndarray | None = None, noise_ratio: float | None = None,
                 prompt_noise_ratio: float | None = None) -> np.ndarray:
    """Return the finite-G factor on the stiffness at mean reward ``reward``, relative to D = 1.

    D = 1 - p^G - (1-p)^G is the share of groups with an advantage (derivation
    ``finite_group_drift_factor``, docs/theory.md section 9). SGD: k = lr kappa D
    (``sgd_stiffness_finite_group``), the factor is D. Adam: k = lr (1 - beta1) kappa_A
    sqrt(D / (D + rho_A / (B G))) (``adam_stiffness_finite_group``) over its value at D = 1;
    signal-dominated Adam (no noise ratio) normalises D away (factor 1).

    Parameters
    ----------
    reward : numpy.ndarray
        Mean-field reward p, clipped to [0.001, 0.999].
    optimizer : str
        ``"sgd"`` or ``"adam"``.
    group_size, batch : numpy.ndarray
        G and B (broadcast against ``reward``); ``batch`` is needed for Adam with a noise ratio.
    noise_ratio : float or numpy.ndarray, optional
        Adam's rho_A (per completion, rho_c of the split form), broadcast against ``reward``.
    prompt_noise_ratio : float or numpy.ndarray, optional
        Adam's between-prompt ratio rho_p (derivation ``adam_stiffness_split_finite_group``).

    Returns
    -------
    numpy.ndarray
        The factor, in (0, 1].
    """
    return drift_factor_of(optimizer=optimizer, group_size=group_size, batch=batch,
                           noise_ratio=noise_ratio, prompt_noise_ratio=prompt_noise_ratio)(reward)


def drift_factor_of(*, optimizer: str, group_size: np.ndarray, batch: np.ndarray | None = None,
                    noise_ratio: float | None = None, prompt_noise_ratio: float | None = None
                    ) -> Callable[[np.ndarray], np.ndarray]:
    """Return :func:`drift_factor` as a function of the reward alone, the rest resolved once.

    A map iterated step by step calls the factor at every step with the same G, B and noise
    ratios: the compiled functions and Adam's value at D = 1 are looked up and computed here
    once, and each call evaluates only what depends on the reward (the same floats as
    :func:`drift_factor`). Parameters as for :func:`drift_factor`, less ``reward``.
    """
    if optimizer == "sgd":
        drift = compiled("finite_group_drift_factor")
        return lambda reward: np.asarray(drift(group_size, _clipped(reward)), dtype=float)
    if noise_ratio is None:
        return lambda reward: np.ones_like(_clipped(reward))
    if prompt_noise_ratio is not None and np.any(prompt_noise_ratio):
        split = compiled("adam_stiffness_split_finite_group")
        at_one = compiled("adam_stiffness_split")(1.0, 0.0, 1.0, prompt_noise_ratio, noise_ratio,
                                                  batch, group_size)
        return lambda reward: np.asarray(
            split(1.0, 0.0, 1.0, prompt_noise_ratio, noise_ratio, batch, group_size,
                  _clipped(reward)) / at_one, dtype=float)
    finite = compiled("adam_stiffness_finite_group")
    at_one = compiled("adam_stiffness_noise_ratio")(1.0, 0.0, 1.0, noise_ratio, batch, group_size)
    return lambda reward: np.asarray(
        finite(1.0, 0.0, 1.0, noise_ratio, batch, group_size, _clipped(reward)) / at_one,
        dtype=float)


def _clipped(reward: np.ndarray) -> np.ndarray:
    """Return the mean-field reward as the success probability p in [0.001, 0.999]."""
    return np.clip(np.asarray(reward, dtype=float), 1e-3, 1 - 1e-3)
