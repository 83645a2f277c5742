"""Measure the constants of the theory on the network before training (no reward curve used).

Three measurements at the warmed-up weights (the notation of docs/theory.md; ``g`` is the expected
update
direction per unit lr, minus the gradient of the GRPO loss of :mod:`.grpo`):

- Curvature spectrum. The expected GRPO objective, with the advantages held fixed, is
  Phi(theta) = -(1/N_tok) sum_i A_i exp(S_i - stop(S_i)) (S_i: log-probability of completion i):
  its gradient at the sampling weights is the GRPO gradient, and its Hessian
  -(1/N_tok) sum_i A_i (grad^2 S_i + grad S_i grad S_i^T) is an unbiased estimate of the Jacobian
  of the expected update (the score-function term included). Hessian-vector products by double
  backward, Lanczos with full reorthogonalisation for the top eigenvalues. A top eigenvalue of a
  sampled matrix is biased upwards by the sampling noise, so its eigenvector is also evaluated on
  independent samples (cross-validated Rayleigh quotient, unbiased for that direction, a lower
  bound of the true top curvature): the two bracket the stiff curvature h_max [1/lr units].
  Heavy-ball on a quadratic with curvature h has stiffness k = lr h (docs/theory.md section 1), so
  the
  on-policy Jury limit k < 2 (1 + momentum) is lr < 2 (1 + momentum) / h_max.
- Drift and kappa. D = grad r . g (expected reward change per unit lr, docs/theory.md section 1's
  force F) at briefly trained copies, grad r by REINFORCE with a leave-one-out baseline and g from
  independent samples, so the product is unbiased; kappa = -dD/dr by weighted least squares.
  Also the curvature along the expected update direction, h_g = g.H g / |g|^2, and the kappa it
  implies if the reward is quadratic in the weights along g: kappa_g = 2 h_g (r* - r is quadratic
  in the displacement, so it relaxes twice as fast as the displacement).
- Quadratic range. r(theta + lr g) - r(theta) measured (common random numbers) against the
  first-order lr D, for each lr of the sweep grid.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np

from .grpo import Batch, RunSettings, grpo_loss, run, sample_batch, token_logps

__all__ = ["hvp_operator", "lanczos_top", "lanczos_vectors", "curvature_spectrum", "drift_point",
           "fit_kappa", "sample_batches",
           "reward_along", "quadratic_range", "critical_lr", "measure_model",
           "critical_lr_along_run", "mean_update_curvature", "debiased_curvature"]


def _params(model: Any) -> list[Any]:
    return [p for p in model.parameters()]


def _flat(tensors: list[Any]) -> Any:
    import torch

    return torch.cat([t.reshape(-1) for t in tensors])


def _dice_objective(model: Any, batch: Batch) -> Any:
    """Phi: the GRPO loss with a magic-box weight, advantages held fixed."""
    import torch

    logps = token_logps(model, batch.prompt_ids, batch.completion_ids)
    seq = (logps * batch.completion_mask).sum(1)
    adv = batch.advantages
    mask = batch.completion_mask
    # per-token weight of TRL's token-normalised loss, with the sequence's magic box
    weights = mask.sum(1).float() / mask.sum().clamp(min=1)
    return -(adv * weights * torch.exp(seq - seq.detach())).sum()


def hvp_operator(model: Any, batches: list[Batch]) -> tuple[Any, Any]:
    """Return the Hessian-vector product v -> H v of Phi averaged over ``batches``, and grad Phi."""
    import torch

    params = _params(model)
    grads = None
    for b in batches:
        g = torch.autograd.grad(_dice_objective(model, b) / len(batches), params,
                                create_graph=True)
        grads = list(g) if grads is None else [a + c for a, c in zip(grads, g, strict=True)]
    flat = _flat(grads)

    def hvp(v: Any) -> Any:
        out = torch.autograd.grad(flat, params, grad_outputs=v, retain_graph=True)
        return _flat(list(out)).detach()

    return hvp, flat.detach()


def lanczos_top(hvp: Any, dim: int, *, iterations: int = 20, seed: int = 0,
                top: int = 3) -> tuple[np.ndarray, Any, float]:
    """Top Ritz values (largest algebraic) of a symmetric operator by Lanczos.

    Returns
    -------
    tuple
        (top Ritz values, descending; unit Ritz vector of the largest; its residual norm
        |H v - lambda v|, the a-posteriori error bound of the largest Ritz value).
    """
    values, vectors, residuals = lanczos_vectors(hvp, dim, iterations=iterations, seed=seed,
                                                 count=1)
    return values[:top], vectors[0], residuals[0]


def lanczos_vectors(hvp: Any, dim: int, *, iterations: int = 20, seed: int = 0,
                    count: int = 3) -> tuple[np.ndarray, Any, list[float]]:
    """Ritz values (descending) and the ``count`` top unit Ritz vectors of a symmetric operator.

    Lanczos with full reorthogonalisation (the stiff directions of :func:`curvature_spectrum`).

    Returns
    -------
    tuple
        (all Ritz values, descending; (count, dim) tensor of the top Ritz vectors; their
        residual norms |H v - lambda v|, the a-posteriori error bounds of their Ritz values).
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(dim, generator=gen)
    q = q / q.norm()
    basis, alphas, betas = [q], [], []
    w_prev, beta = torch.zeros(dim), 0.0
    for j in range(iterations):
        w = hvp(basis[j]) - beta * w_prev
        alpha = float(w @ basis[j])
        w = w - alpha * basis[j]
        for b in basis:  # full reorthogonalisation
            w = w - (w @ b) * b
        alphas.append(alpha)
        beta = float(w.norm())
        if j == iterations - 1 or beta < 1e-10:
            break
        betas.append(beta)
        w_prev = basis[j]
        basis.append(w / beta)
    t = np.diag(alphas) + np.diag(betas[:len(alphas) - 1], 1) + np.diag(betas[:len(alphas) - 1],
                                                                         -1)
    values, vectors = np.linalg.eigh(t)
    order = np.argsort(values)[::-1]
    q_mat = torch.stack(basis[:len(alphas)], dim=1)
    tops, residuals = [], []
    for i in order[:count]:
        v = q_mat @ torch.tensor(vectors[:, i], dtype=q_mat.dtype)
        v = v / v.norm()
        tops.append(v)
        residuals.append(float((hvp(v) - float(values[i]) * v).norm()))
    return values[order], torch.stack(tops), residuals


def sample_batches(model: Any, tokenizer: Any, count: int, *, prompts: int, group_size: int,
                   seed: int) -> list[Batch]:
    """Draw ``count`` batches of ``prompts`` x ``group_size`` completions, seeded by ``seed``."""
    import torch

    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    return [sample_batch(model, tokenizer, batch=prompts, group_size=group_size, rng=rng,
                         generator=gen) for _ in range(count)]


def curvature_spectrum(model: Any, tokenizer: Any, *, replicates: int = 4, prompts: int = 256,
                       group_size: int = 8, iterations: int = 20, seed: int = 0
                       ) -> dict[str, Any]:
    """Top Hessian eigenvalues of Phi, in-sample and cross-validated, and the curvature along g.

    ``replicates`` independent sample sets; each gives the top Ritz values and vector, and the
    vector (and the sample's g) is evaluated on the next sample set (cyclically): mean and
    standard error over replicates.
    """
    sets = [sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                     seed=seed * 1000 + i) for i in range(replicates)]
    operators = [hvp_operator(model, s) for s in sets]
    dim = operators[0][1].numel()
    tops, vectors, residuals = [], [], []
    for i, (hvp, _) in enumerate(operators):
        values, v, res = lanczos_top(hvp, dim, iterations=iterations, seed=seed + i)
        tops.append(values)
        vectors.append(v)
        residuals.append(res)
    cross, along = [], []
    for i in range(replicates):
        hvp_other, _ = operators[(i + 1) % replicates]
        v = vectors[i]
        cross.append(float(v @ hvp_other(v)))
        g = -operators[i][1]
        if float(g @ g) > 0:  # every group degenerate: no update direction in this replicate
            along.append(float(g @ hvp_other(g)) / float(g @ g))
    tops_arr = np.array(tops)
    return {"top_eigenvalues": tops_arr.mean(0).tolist(),
            "top_eigenvalues_se": (tops_arr.std(0, ddof=1) / np.sqrt(replicates)).tolist(),
            "lanczos_residual": float(np.mean(residuals)),
            "top_cross_validated": float(np.mean(cross)),
            "top_cross_validated_se": float(np.std(cross, ddof=1) / np.sqrt(replicates)),
            "curvature_along_update": float(np.mean(along)) if along else None,
            "curvature_along_update_se": (float(np.std(along, ddof=1) / np.sqrt(len(along)))
                                          if len(along) > 1 else None),
            "replicates": replicates, "completions_per_replicate": prompts * group_size,
            "lanczos_iterations": iterations, "top_vector": vectors[0]}


def _reward_gradient(model: Any, batch: Batch) -> Any:
    import torch

    grouped = batch.rewards.view(-1, batch.group_size)
    n = batch.group_size
    baseline = (grouped.sum(1, keepdim=True) - grouped) / (n - 1)
    weight = (grouped - baseline).flatten()
    logps = token_logps(model, batch.prompt_ids, batch.completion_ids)
    objective = (weight * (logps * batch.completion_mask).sum(1)).mean()
    return _flat(list(torch.autograd.grad(objective, _params(model))))


def _update_direction(model: Any, batch: Batch) -> Any:
    import torch


    return -_flat(list(torch.autograd.grad(grpo_loss(model, batch), _params(model))))


def drift_point(model: Any, tokenizer: Any, *, replicates: int = 4, prompts: int = 256,
                group_size: int = 8, seed: int = 0) -> dict[str, float]:
    """Measure the expected reward r and the drift per unit lr D = grad r . g, with s.e."""
    rs, ds = [], []
    for i in range(replicates):
        a, b = sample_batches(model, tokenizer, 2, prompts=prompts, group_size=group_size,
                        seed=seed * 7919 + i)
        model.train()
        grad_r = _reward_gradient(model, a)
        g = _update_direction(model, b)
        ds.append(float(grad_r @ g))
        rs.append(float(0.5 * (a.rewards.mean() + b.rewards.mean())))
    rs_arr, ds_arr = np.array(rs), np.array(ds)
    return {"reward": float(rs_arr.mean()),
            "reward_se": float(rs_arr.std(ddof=1) / np.sqrt(replicates)),
            "drift": float(ds_arr.mean()),
            "drift_se": float(ds_arr.std(ddof=1) / np.sqrt(replicates))}


def fit_kappa(points: list[dict[str, float]]) -> dict[str, float]:
    """Weighted straight line D = kappa (r* - r): kappa = -slope, r* = the root, with s.e."""
    r = np.array([p["reward"] for p in points])
    d = np.array([p["drift"] for p in points])
    w = 1.0 / np.maximum(np.array([p["drift_se"] for p in points]), 1e-12) ** 2
    x = np.vstack([np.ones_like(r), r]).T
    cov = np.linalg.inv(x.T @ (x * w[:, None]))
    intercept, slope = cov @ (x.T @ (w * d))
    kappa = -slope
    plateau = intercept / kappa if kappa != 0 else float("nan")
    return {"kappa": float(kappa), "kappa_se": float(np.sqrt(cov[1, 1])),
            "plateau": float(plateau), "points": len(points)}


def reward_along(model: Any, tokenizer: Any, direction: Any, step: float, *, prompts: int = 256,
                 group_size: int = 8, seed: int = 0) -> float:
    """r(theta + step * direction) - r(theta), common random numbers (same prompts and noise)."""
    import torch

    params = _params(model)
    base = torch.nn.utils.parameters_to_vector(params).detach().clone()
    means = []
    for shift in (0.0, step):
        torch.nn.utils.vector_to_parameters(base + shift * direction, params)
        (b,) = sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                              seed=seed)
        means.append(float(b.rewards.mean()))
    torch.nn.utils.vector_to_parameters(base, params)
    return means[1] - means[0]


def quadratic_range(model: Any, tokenizer: Any, direction: Any, drift: float,
                    lr_grid: list[float], *, repeats: int = 4, seed: int = 0
                    ) -> list[dict[str, float]]:
    """Measured reward change along ``lr * direction`` against first order ``lr * drift``.

    ``repeats`` independent common-random-number differences per lr (2048 completions each):
    mean and standard error.
    """
    rows = []
    for lr in lr_grid:
        changes = np.array([reward_along(model, tokenizer, direction, lr, seed=seed + 500 + j)
                            for j in range(repeats)])
        rows.append({"lr": lr, "measured": float(changes.mean()),
                     "measured_se": float(changes.std(ddof=1) / np.sqrt(repeats)),
                     "first_order": lr * drift})
    return rows


def critical_lr(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Find the step size at which a full expected step stops gaining reward (critical sharpness).

    The largest lr of the grid before the first one whose measured reward change is negative by
    more than two standard errors (None: already the first; the last lr: none on the grid).
    """
    last = None
    for row in rows:
        if row["measured"] + 2 * row["measured_se"] < 0:
            return {"value": last, "first_losing_lr": row["lr"]}
        last = row["lr"]
    return {"value": last, "first_losing_lr": None}


def measure_model(model: Any, tokenizer: Any, *, lr_grid: list[float], checkpoints: int = 5,
                  warm_lr: float = 0.1, warm_steps: int = 10, replicates: int = 4,
                  seed: int = 0, spectrum_iterations: int = 20) -> dict[str, Any]:
    """All measurements of one warmed-up model (see the module docstring); no reward curve.

    The briefly trained copies are ``checkpoints`` points ``warm_steps`` GRPO steps apart at
    ``warm_lr`` (momentum 0), the first one the warmed-up model itself.
    """
    import torch

    spectrum = curvature_spectrum(model, tokenizer, replicates=replicates,
                                  iterations=spectrum_iterations, seed=seed)
    top_vector = spectrum.pop("top_vector")
    # the expected update direction on a large sample, for the quadratic-range check
    (big,) = sample_batches(model, tokenizer, 1, prompts=256, group_size=8, seed=seed + 99)
    model.train()
    g = _update_direction(model, big)
    first = drift_point(model, tokenizer, replicates=replicates, seed=seed)
    quadratic = quadratic_range(model, tokenizer, g, first["drift"], lr_grid, seed=seed)
    copy_model = copy.deepcopy(model)
    points = [first]
    for c in range(1, checkpoints):
        run(copy_model, tokenizer, RunSettings(lr=warm_lr, steps=warm_steps, seed=seed + 50 + c))
        points.append(drift_point(copy_model, tokenizer, replicates=replicates, seed=seed + c))
    kappa = fit_kappa(points)
    h_g = spectrum["curvature_along_update"]
    return {"spectrum": spectrum, "drift_points": points, "kappa_fit": kappa,
            "kappa_from_curvature_along_update": 2.0 * h_g,
            "quadratic_range": quadratic, "critical_lr": critical_lr(quadratic),
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "top_vector_norm": float(torch.linalg.vector_norm(top_vector))}


def critical_lr_along_run(model: Any, tokenizer: Any, *, lr: float, steps: int, every: int,
                          lr_grid: list[float], seed: int = 0) -> list[dict[str, Any]]:
    """Re-measure the critical lr at checkpoints of a run (progressive sharpening check).

    Trains ``model`` in place at ``lr`` (momentum 0) and, every ``every`` steps (and at the
    start), measures the drift and the reward change along the expected update, as
    :func:`measure_model` does at the start: an observation made along the run, not a
    prediction.
    """
    rows = []
    for n in range(0, steps + 1, every):
        if n:
            run(model, tokenizer, RunSettings(lr=lr, steps=every, seed=seed + n))
        (big,) = sample_batches(model, tokenizer, 1, prompts=256, group_size=8, seed=seed + 99 + n)
        model.train()
        g = _update_direction(model, big)
        point = drift_point(model, tokenizer, seed=seed + n)
        table = quadratic_range(model, tokenizer, g, point["drift"], lr_grid, seed=seed + n)
        rows.append({"step": n, "reward": point["reward"], "drift": point["drift"],
                     "critical_lr": critical_lr(table), "quadratic_range": table})
    return rows


def mean_update_curvature(model: Any, tokenizer: Any, *, replicates: int = 6, prompts: int = 128,
                          group_size: int = 8, seed: int = 0) -> dict[str, Any]:
    """Curvature along the expected update, with the sampling noise of g removed (soft mode).

    A sampled update g_i = gbar + noise_i: g.H g / g.g of one sample weighs the noise directions,
    which dominate |g|^2 and are stiff. With independent replicates i, j, k (each its own sample
    of ``prompts`` x ``group_size`` completions), g_i . H_k g_j (i, j, k distinct) is unbiased
    for gbar . Hbar gbar and g_i . g_j (i != j) for |gbar|^2: their ratio is the curvature of the
    mean update direction, h_r, the soft stiffness per unit lr of the two-mode map
    (theory/two_mode.py). The reward relaxes with kappa = 2 h_r (the deficit is quadratic in the
    displacement). Standard errors by leave-one-replicate-out jackknife.

    Returns
    -------
    dict
        ``curvature`` [1/lr] and ``curvature_se``, ``signal_fraction`` |gbar|^2 / mean |g_i|^2
        (how much of a sampled update is the mean), ``noisy_curvature`` (the plain mean of
        g_i . H_k g_i / |g_i|^2, k != i, for comparison), ``replicates``, ``completions``.
    """
    sets = [sample_batches(model, tokenizer, 1, prompts=prompts, group_size=group_size,
                     seed=seed * 3001 + 17 + i) for i in range(replicates)]
    operators = [hvp_operator(model, s) for s in sets]
    result = debiased_curvature([-grad for _, grad in operators], [h for h, _ in operators])
    return {**result, "completions": prompts * group_size}


def debiased_curvature(updates: list[Any], hvps: list[Any]) -> dict[str, Any]:
    """Return gbar.H gbar / |gbar|^2 from independent noisy samples g_i and H_k (see above).

    Parameters
    ----------
    updates : list of torch.Tensor
        Independent sampled update directions g_i (flat).
    hvps : list of callable
        Hessian-vector products v -> H_k v, H_k estimated on the same sample as g_k.

    Returns
    -------
    dict
        ``curvature`` and its jackknife ``curvature_se``, ``signal_fraction``,
        ``noisy_curvature`` (same-sample g_i . H_k g_i / |g_i|^2, k != i), ``replicates``.
    """
    replicates = len(updates)
    if replicates < 4 or len(hvps) != replicates:
        raise ValueError(f"need >= 4 replicates with one operator each, got {replicates} "
                         f"updates and {len(hvps)} operators")
    products = np.zeros((replicates, replicates, replicates))  # [i, j, k] = g_i . H_k g_j
    for k, hvp in enumerate(hvps):
        for j in range(replicates):
            if j != k:
                hg = hvp(updates[j])
                for i in range(replicates):
                    products[i, j, k] = float(updates[i] @ hg)
    gram = np.array([[float(a @ b) for b in updates] for a in updates])

    def ratio(keep: list[int]) -> tuple[float, float, float]:
        num = [products[i, j, k] for i in keep for j in keep for k in keep
               if len({i, j, k}) == 3]
        den = [gram[i, j] for i in keep for j in keep if i != j]
        noisy = [products[i, i, k] / gram[i, i] for i in keep for k in keep
                 if k != i and gram[i, i] > 0]
        return float(np.mean(num)) / float(np.mean(den)), float(np.mean(den)), float(
            np.mean(noisy))

    everyone = list(range(replicates))
    value, signal, noisy = ratio(everyone)
    leave = np.array([ratio([i for i in everyone if i != out])[0] for out in everyone])
    se = float(np.sqrt((replicates - 1) / replicates * ((leave - leave.mean()) ** 2).sum()))
    return {"curvature": value, "curvature_se": se,
            "signal_fraction": signal / float(np.mean(np.diag(gram))),
            "noisy_curvature": noisy, "replicates": replicates}
