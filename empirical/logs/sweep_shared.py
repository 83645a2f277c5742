"""The prompts a target run shares with source runs: one seed and one batch draw the same prompts.

A trainer that draws its prompts from a seeded sampler gives every run of one seed and one batch
size B the same B prompts at step n, whatever its lr, group size G or optimizer. The per-step
reward is the mean over those prompts, so its sampling noise splits as the noise model has it
(docs/theory.md section 9, derivation ``sampling_variance_split``; :func:`.sweep_band.noise_model`):

    var r_n = r (1 - r) (c_B / B + c_BG / (B G)),

a between-prompt part pi_n (which prompts were drawn, variance r (1 - r) c_B / B) that runs of
one seed and one B share step by step, and a within-group part (which completions were sampled,
variance r (1 - r) c_BG / (B G)) of each run's own. A run's deviation from its smoothed path,
delta_j(n) = r_j(n) - (moving average of r_j)(n), is pi_n + eps_j(n). The best linear predictor
of the target's pi_n from J such partner runs (eps_j independent, variance proportional to
c_BG / G_j) is

    pi_hat_n = beta sum_j w_j delta_j(n),   w_j = G_j / sum_k G_k,
    beta = c_B / (c_B + c_BG / sum_j G_j),

and it leaves the target a prompt-part variance r (1 - r) (1 - beta) c_B / B. The transfer adds
pi_hat to its mean path and the band keeps only the unexplained part: the prediction is that of
the run with the target's seed, conditioned on the prompts its partners drew. Runs of another
seed or another B share no prompts (their deviations are uncorrelated), and a target without a
seed or a B is not conditioned.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from grpodyn.empirical.logs.sweep_band import Band, band_window, deviation, shared_prompt_part
from grpodyn.empirical.logs.sweep_fit import SweepFit
from grpodyn.empirical.logs.sweep_runs import SweepRun

__all__ = ["partners", "shared_prompts"]


def partners(fit: SweepFit, hp: dict[str, Any]) -> list[SweepRun]:
    """Return the fitted source runs that drew the target's prompts: its seed and its batch."""
    seed, batch = hp.get("seed"), hp.get("batch")
    if seed is None or not batch:
        return []
    return [r for r in fit.fitted if r.hparams.get("seed") == seed
            and r.hparams.get("batch") == batch and (r.hparams.get("group_size") or 0) >= 1]


def _deviation(run: SweepRun, n: int) -> np.ndarray:
    """Return delta(m) = r(m) - moving average of r at m over steps 0..n (0 where not logged)."""
    out = np.zeros(n + 1)
    at = run.steps.astype(int)
    keep = (at >= 0) & (at <= n) & np.isclose(run.steps, at)
    out[at[keep]] = deviation(run.reward, band_window(run.reward.size))[keep]
    return out


def shared_prompts(fit: SweepFit, predicted: Band, hp: dict[str, Any], n: int
                   ) -> tuple[Band, dict[str, Any]]:
    """Condition a prediction on the prompts its partner runs drew (module docstring).

    Returns the band with pi_hat added to its mean (in reward units, the result kept inside a
    known range) and the prompt part of its sampling variance reduced to (1 - beta) of itself,
    and a dict: ``status``, ``beta``, ``partners`` (run names), ``form`` and, where conditioned,
    ``shift`` (pi_hat at steps 0..n, reward units: what the mean gained). Unchanged where no
    source run shares the target's seed and batch, or where the runs of one seed and B show no
    shared prompt noise (:func:`~.sweep_band.shared_prompt_part`: a trainer that draws each
    run's prompts apart).
    """
    form = ("pi_hat(n) = beta sum_j (G_j / sum G) (r_j(n) - smoothed r_j(n)), "
            "beta = c_B / (c_B + c_BG / sum_j G_j)")
    info: dict[str, Any] = {"beta": None, "partners": [], "form": form}
    runs = partners(fit, hp)
    c_b, c_bg = (float(v) for v in predicted.coef)
    batch, group = hp.get("batch"), hp.get("group_size")
    if not runs:
        info["status"] = ("not used: no source run shares the target's seed and batch"
                          if hp.get("seed") is not None and batch else
                          "not used: the target's seed or batch is not given")
        return predicted, info
    measured = shared_prompt_part(fit)
    if measured["status"] != "measured" or not group:
        info["status"] = (f"not used: {measured['status']}" if group else
                          "not used: the target's G unknown")
        return predicted, info
    sizes = np.array([float(r.hparams["group_size"]) for r in runs])
    beta = c_b / (c_b + c_bg / float(np.sum(sizes)))
    pi_hat = beta * np.sum([w * _deviation(r, n) for w, r in
                            zip(sizes / np.sum(sizes), runs, strict=True)], axis=0)
    scale = predicted.scale
    mean = predicted.mean + pi_hat
    if scale.bounded:
        mean = np.clip(mean, scale.low, scale.high)
    level = np.clip((predicted.mean - scale.low) / (scale.high - scale.low) if scale.bounded
                    else predicted.mean, 0.01, 0.99)
    var_sampling = np.maximum(predicted.var_sampling - level * (1 - level) * beta * c_b / batch,
                              0.0)
    info.update({"status": f"conditioned on the prompts of {len(runs)} source run"
                           f"{'s' if len(runs) > 1 else ''} with seed {hp['seed']} and batch "
                           f"{batch}", "beta": float(beta),
                 "partners": [r.name for r in runs],
                 "shift": [float(v) for v in mean - predicted.mean]})
    return replace(predicted, centre=scale.forward(mean), var_sampling=var_sampling), info
