"""The stiff direction of the network: a 1-D scan along it, and its coordinate during lagged runs.

An observation layer for findings 10c's open question (why the lag thresholds of the stiff mode
fail): the linear map of docs/theory.md section 5 says that with staleness d (or sample-and-hold
refresh K) the coordinate u = v . (theta - theta_0) along the top Hessian eigenvector v grows
without bound once lr h > k_lim(d), h = v . H v its curvature. Two measurements test the
saturation hypothesis (past the limit a step saturates the softmax along v, the groups it
touches go degenerate and the curvature along v falls, cf. the self-stabilization at the edge of
stability of Damian, Nichani and Lee 2022):

- before training, :func:`scan_along`: along theta_0 + s v the curvature h(s) = v . H v, the
  force f(s) = v . g (g = minus the GRPO gradient), the sampled reward and the share of
  degenerate groups, each with the standard error over independent replicates; and
  :func:`saturation_amplitude`, the smallest |s| at which lr h(s) falls below k_lim;
- during training, :func:`track_runs`: per step the projections of theta_n - theta_0 and of the
  fresh force on v and the next eigenvectors, and the degenerate-group share.

Hessian of the GRPO objective as in :mod:`.measure` (score-function term included).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from scipy.optimize import brentq

from grpodyn.empirical.deepnet.grpo import RunSettings, degenerate_share, run
from grpodyn.empirical.deepnet.measure import hvp_operator, lanczos_vectors, sample_batches
from grpodyn.numerics.stability import refresh_stable, staleness_stiffness_max

__all__ = ["stiff_directions", "scan_along", "lag_stiffness_limit", "saturation_amplitude",
           "scan_grid", "track_runs", "tracking_plan"]


def stiff_directions(model: Any, tokenizer: Any, *, count: int = 3, prompts: int = 256,
                     group_size: int = 8, iterations: int = 20, seed: int = 0
                     ) -> dict[str, Any]:
    """Top ``count`` Hessian eigenvectors of the GRPO objective at the current weights.

    The sample and Lanczos start are those of replicate 0 of
    :func:`.measure.curvature_spectrum` with the same ``seed`` (the same top vector); each
    vector's curvature is also evaluated on an independent sample (cross-validated, unbiased
    for that direction).

    Returns
    -------
    dict
        ``vectors`` ((count, P) tensor), ``eigenvalues`` (in-sample Ritz values [1/lr]),
        ``cross_validated`` (v . H' v on an independent sample), ``residuals``, ``force``
        (v . g, g = minus the GRPO gradient of the sample), ``update_norm`` (|g|).
    """
    (sample,) = sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                         seed=seed * 1000)
    hvp, grad = hvp_operator(model, [sample])
    values, vectors, residuals = lanczos_vectors(hvp, grad.numel(), iterations=iterations,
                                                 seed=seed, count=count)
    (other,) = sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                        seed=seed * 1000 + 1)
    hvp_other, _ = hvp_operator(model, [other])
    return {"vectors": vectors, "eigenvalues": [float(x) for x in values[:count]],
            "cross_validated": [float(v @ hvp_other(v)) for v in vectors],
            "residuals": residuals, "force": (-(vectors @ grad)).tolist(),
            "update_norm": float(grad.norm()), "completions": prompts * group_size}


def scan_grid(step: float, multiples: tuple[float, ...] = (0.25, 0.5, 1, 2, 4, 8, 16)
              ) -> list[float]:
    """Return the displacements of the scan: 0 and +-``step`` times ``multiples``, ascending."""
    if not step > 0:
        raise ValueError(f"scan step must be positive, got {step}")
    return sorted([0.0] + [sign * step * m for m in multiples for sign in (-1.0, 1.0)])


def scan_along(model: Any, tokenizer: Any, direction: Any, displacements: list[float], *,
               replicates: int = 4, prompts: int = 64, group_size: int = 8, seed: int = 0
               ) -> list[dict[str, float]]:
    """Measure h(s), f(s), reward and degenerate share along theta_0 + s ``direction``.

    Each displacement gets ``replicates`` independent samples of ``prompts`` x ``group_size``
    completions (the same random streams at every s: common random numbers); means and
    standard errors over the replicates. The weights are restored afterwards.

    Returns
    -------
    list of dict
        Per displacement ``s``: ``curvature`` v . H v [1/lr] and ``curvature_se``, ``force``
        v . g and ``force_se``, ``reward`` and ``reward_se``, ``degenerate`` and
        ``degenerate_se``.
    """
    import torch

    if replicates < 2:
        raise ValueError(f"scan needs >= 2 replicates for its standard errors, got {replicates}")
    params = [p for p in model.parameters()]
    base = torch.nn.utils.parameters_to_vector(params).detach().clone()
    rows = []
    try:
        for s in displacements:
            with torch.no_grad():
                torch.nn.utils.vector_to_parameters(base + s * direction, params)
            values: dict[str, list[float]] = {"curvature": [], "force": [], "reward": [],
                                              "degenerate": []}
            for r in range(replicates):
                (b,) = sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                                seed=seed * 4001 + 31 + r)
                hvp, grad = hvp_operator(model, [b])
                values["curvature"].append(float(direction @ hvp(direction)))
                values["force"].append(float(-(direction @ grad)))
                values["reward"].append(float(b.rewards.mean()))
                values["degenerate"].append(degenerate_share(b.rewards, group_size))
            row = {"s": float(s)}
            for key, xs in values.items():
                arr = np.asarray(xs)
                row[key] = float(arr.mean())
                row[f"{key}_se"] = float(arr.std(ddof=1) / np.sqrt(arr.size))
            rows.append(row)
    finally:
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(base, params)
    return rows


def lag_stiffness_limit(*, momentum: float = 0.0, staleness: int = 0, refresh: int = 1
                        ) -> float:
    """Return the largest stable stiffness k of the one-mode map with this lag (theory section 5).

    Staleness d: :func:`grpodyn.numerics.stability.staleness_stiffness_max`. Sample-and-hold
    refresh K: the root in k of the compiled Jury conditions of the cycle map
    (:func:`grpodyn.numerics.stability.refresh_stable`), found by bisection below the
    on-policy limit 2 (1 + momentum).
    """
    if staleness and refresh > 1:
        raise ValueError("give either refresh > 1 or staleness > 0, not both")
    if refresh <= 1:
        return float(staleness_stiffness_max(momentum, staleness))
    top = 2.0 * (1.0 + momentum)

    def margin(k: float) -> float:
        return 0.5 if bool(refresh_stable(momentum, k, refresh)) else -0.5

    return float(brentq(margin, 1e-9, top * (1 - 1e-9), xtol=1e-10))


def saturation_amplitude(rows: list[dict[str, float]], *, lr: float, limit: float
                         ) -> dict[str, Any]:
    """Smallest |s| on each side at which lr h(s) has fallen below ``limit`` (two s.e.).

    ``rows`` from :func:`scan_along`. A side whose every |s| keeps lr h(s) above the limit gets
    ``None`` with a status; ``0.0`` means lr h(0) is already below the limit (the lag is
    stable at the start for this direction).
    """
    out: dict[str, Any] = {}
    zero = [r for r in rows if r["s"] == 0.0]
    below = [lr * (r["curvature"] + 2 * r["curvature_se"]) < limit for r in zero]
    for side, sign in (("positive", 1.0), ("negative", -1.0)):
        if below and below[0]:
            out[side] = 0.0
            continue
        found = None
        for r in sorted((r for r in rows if r["s"] * sign > 0), key=lambda r: abs(r["s"])):
            if lr * (r["curvature"] + 2 * r["curvature_se"]) < limit:
                found = abs(r["s"])
                break
        out[side] = found
        if found is None:
            out[f"{side}_status"] = "lr h(s) above the limit over the whole scan"
    return out


def tracking_plan(*, lr: float, staleness: tuple[int, ...] = (0, 2, 4, 8),
                  refresh: tuple[int, ...] = (4, 8), steps: int = 60) -> list[dict[str, Any]]:
    """List the tracked runs: staleness d and sample-and-hold K at ``lr``, momentum 0.

    K = 1 is the on-policy run, the same as d = 0 (same seed: the same run), so it is not
    listed twice.
    """
    plan = [{"sweep": "staleness", "lr": lr, "momentum": 0.0, "staleness": d, "steps": steps}
            for d in staleness]
    plan += [{"sweep": "refresh", "lr": lr, "momentum": 0.0, "refresh": k, "mode": "hold",
              "steps": steps} for k in refresh if k > 1]
    return plan


def track_runs(model: Any, tokenizer: Any, directions: Any, plan: list[dict[str, Any]], *,
               seeds: int = 3, seed_offset: int = 300, progress: Any = None
               ) -> list[dict[str, Any]]:
    """Run each setting of ``plan`` on copies of ``model``, recording the stiff coordinates.

    Returns
    -------
    list of dict
        One record per run: ``setting``, ``seed``, ``reward``, ``degenerate_share``,
        ``projection`` (per step, v_j . (theta_{n+1} - theta_0)), ``force_projection`` (per
        step, v_j . g_n of the fresh force, None on held steps), ``update_norm``, ``finite``.
    """
    records = []
    items = [(setting, seed) for setting in plan
             for seed in range(seed_offset, seed_offset + seeds)]
    for setting, seed in (progress(items) if progress else items):
        fields = {k: v for k, v in setting.items() if k != "sweep"}
        result = run(copy.deepcopy(model), tokenizer, RunSettings(seed=seed, **fields),
                     directions=directions)
        records.append({"setting": setting, "seed": seed,
                        **{k: result[k] for k in ("reward", "degenerate_share", "projection",
                                                  "force_projection", "update_norm",
                                                  "finite")}})
    return records
