"""The band of a transfer: the mean path of a new setting and what its uncertainty is made of.

A mean reward that lives in a known range [lo, hi] (an accuracy or a pass rate: [0, 1]) has
its mean path formed in the logit space of the normalised reward, u = logit((r - lo) / (hi -
lo)), and mapped back, so that the mean cannot leave the range (a map that overshoots its
plateau, a draw that runs away, bends toward the bound instead); the band is clipped to the
range. A reward without a known range is modelled as it is, unbounded; a draw whose map runs
away there has no edge to count at and is left out of the band, said in a warning.

The band is the mean -+ z sd with a variance of r in four parts:

- the fitted constants and the fitted exponents, by sampling: ``draws`` draws of the constants
  from their cluster-robust covariance and, per draw, the exponents of the two scaling laws the
  transfer leans on (below); the part is the squared half-width of the draws' central 68%
  (robust to a draw whose map runs away, which the variance is not);
- the seed-to-seed spread of the sources' paths around the joint model;
- the per-step sampling noise of the target's B and G, r (1 - r) (c_B / B + c_BG / (B G));
- the map's transfer error s d^2 (m(n) - m(0))^2 (:func:`~.sweep_transfer.transfer_error`).

Exponents. The tau-lr exponent p (tau ~ lr^p, the law's -1) and Adam's B G exponent (the law's
range [0, 1/2]) are compared with what the sources measure and chosen by
:mod:`~.sweep_exponents`: the target's stiffness is the fitted map's times (lr / lr_ref)^-(p + 1),
p drawn from N(p_hat, se^2) (the law's N(-1, 0.11^2) where the sources hold one lr), and times a
B G factor where the B G exponent is not determined or the direct measurement corrects the
fitted law. Where the sources contradict a law, or leave the B G exponent open, the transfer
falls back to the nearest source (:func:`~.sweep_transfer.transfer`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import nnls
from scipy.special import expit, logit

from grpodyn.empirical.logs.sweep_exponents import bg_exponent, draw_factors, lr_exponent
from grpodyn.empirical.logs.sweep_fit import SweepFit
from grpodyn.empirical.logs.sweep_model import Evaluator, model_bounds, model_curve
from grpodyn.empirical.logs.sweep_runs import SweepRun

__all__ = ["RewardScale", "deviation", "shared_prompt_part"]

_SMOOTH = 15  # steps of the moving average that separates a run's path from its sampling noise
_EDGE = 1e-3  # how close to a bound the normalised reward may come (logit +-6.9)


@dataclass(frozen=True)
class RewardScale:
    """The space the band is formed in: logit of the normalised reward, or the reward itself."""

    low: float
    high: float
    bounded: bool

    def forward(self, r: np.ndarray) -> np.ndarray:
        """Return u(r) (dimensionless when bounded, reward units otherwise)."""
        if not self.bounded:
            return np.asarray(r, dtype=float)
        share = (np.asarray(r, dtype=float) - self.low) / (self.high - self.low)
        return logit(np.clip(share, _EDGE, 1.0 - _EDGE))

    def back(self, u: np.ndarray) -> np.ndarray:
        """Return r(u), inside [low, high] when bounded."""
        u = np.asarray(u, dtype=float)
        return self.low + (self.high - self.low) * expit(u) if self.bounded else u

    def slope(self, u: np.ndarray) -> np.ndarray:
        """Return dr/du at u."""
        if not self.bounded:
            return np.ones_like(np.asarray(u, dtype=float))
        p = expit(np.asarray(u, dtype=float))
        return (self.high - self.low) * p * (1.0 - p)


def reward_scale(fit: SweepFit) -> RewardScale:
    """Return the reward's scale: logit over its range where one is known, else the reward."""
    low, high = fit.layout.reward_range
    return RewardScale(low, high, bounded=fit.layout.bounded)


def band_window(size: int) -> int:
    """Moving-average width for a run of ``size`` points: 15, or an odd third of a short run."""
    return _SMOOTH if size >= 3 * _SMOOTH else max(5, (size // 3) | 1)


def deviation(reward: np.ndarray, width: int) -> np.ndarray:
    """Return r - its centred moving average of ``width`` points (the mean shrinks at the ends)."""
    kernel = np.ones(width)
    return reward - np.convolve(reward, kernel, mode="same") / np.convolve(
        np.ones_like(reward), kernel, mode="same")


def shared_prompt_part(fit: SweepFit) -> dict[str, Any]:
    """Return c_B as measured by the source runs that drew the same prompts (one seed, one B).

    Two such runs share the between-prompt part of their per-step noise and nothing else, so
    the mean product of their deviations from their smoothed paths measures r (1 - r) c_B / B
    directly (times (1 - 1/w) for a moving average of w points, undone here); c_B is the
    regression of those products on sqrt(l_j (1 - l_j) l_k (1 - l_k)) / B through the origin,
    over every such pair. ``status`` is "measured" where c_B lies 3 standard errors above 0
    (runs of one seed and B do share their prompts), else "not measured: <why>" (a trainer
    that draws each run's prompts apart, or no such pair). Cached on the fit.
    """
    if "shared_prompt_part" in fit.calibrations:
        return fit.calibrations["shared_prompt_part"]
    groups: dict[tuple, list[SweepRun]] = {}
    for run in fit.fitted:
        key = (run.hparams.get("seed"), run.hparams.get("batch"))
        if run.reward.size >= 15 and None not in key and key[1] and run.hparams.get(
                "group_size"):
            groups.setdefault(key, []).append(run)
    x, y = [], []
    for (_, batch), members in groups.items():
        for a, ri in enumerate(members):
            for rj in members[a + 1:]:
                _, ia, ja = np.intersect1d(ri.steps, rj.steps, return_indices=True)
                if ia.size < 15:
                    continue
                width = band_window(min(ri.reward.size, rj.reward.size))
                levels = [float(np.clip(np.mean(fit.layout.share(r.reward)), 0.01, 0.99))
                          for r in (ri, rj)]
                y.append(float(np.mean(deviation(ri.reward, width)[ia]
                                       * deviation(rj.reward, width)[ja])) * width / (width - 1))
                x.append(np.sqrt(np.prod([v * (1 - v) for v in levels])) / batch)
    out: dict[str, Any] = {"value": None, "stderr": None, "pairs": len(x)}
    if len(x) < 2:
        out["status"] = "not measured: fewer than two pairs of source runs share a seed and a B"
    else:
        x_arr, y_arr = np.array(x), np.array(y)
        value = float(x_arr @ y_arr / (x_arr @ x_arr))
        stderr = float(np.sqrt(np.sum((y_arr - value * x_arr) ** 2) / (len(x) - 1)
                               / (x_arr @ x_arr)))
        out.update({"value": value, "stderr": stderr})
        out["status"] = "measured" if value > 3 * stderr else (
            f"not measured: runs of one seed and B share no prompt noise here (c_B "
            f"{value:.3g} +- {stderr:.2g})")
    fit.calibrations["shared_prompt_part"] = out
    return out


def noise_model(fit: SweepFit) -> tuple[np.ndarray, float]:
    """Per-step sampling variance of a logged reward, var = r (1 - r) (c_B / B + c_BG / (B G)).

    Fitted to the source runs' residuals around their own smoothed path; and the seed-to-seed
    variance of the smoothed paths around the joint model. Runs under 15 points are left out.
    The between-prompt part c_B is measured directly where source runs drew the same prompts
    (one seed and one B: :func:`shared_prompt_part`), and c_BG is fitted to what remains of each
    run's variance; otherwise both are fitted (non-negative) to the runs' variances, where they
    are told apart only by how the variance falls with B and with G.
    """
    rows, target, seed_var = [], [], []
    for run in fit.fitted:
        width = band_window(run.reward.size)
        if run.reward.size < 15:
            continue
        smooth = np.convolve(run.reward, np.ones(width) / width, mode="valid")
        centre = run.reward[width // 2: width // 2 + smooth.size]
        var = float(np.var(centre - smooth) * width / (width - 1))
        level = float(np.clip(np.mean(fit.layout.share(run.reward)), 0.01, 0.99))
        b, g = run.hparams.get("batch"), run.hparams.get("group_size")
        if b and g:
            base = level * (1 - level)
            rows.append([base / b, base / (b * g)])
            target.append(var)
        model = model_curve(run, fit.theta, fit.layout)[width // 2: width // 2 + smooth.size]
        seed_var.append(float(np.mean((smooth - model) ** 2)))
    shared = shared_prompt_part(fit)
    prompt = shared["value"] if shared["status"] == "measured" else None
    if rows and prompt is not None:
        a, rest = np.array(rows), np.array(target) - prompt * np.array(rows)[:, 0]
        coef = np.array([prompt, max(float(a[:, 1] @ rest / (a[:, 1] @ a[:, 1])), 0.0)])
    else:
        coef = nnls(np.array(rows), np.array(target))[0] if rows else np.zeros(2)
    return coef, float(np.mean(seed_var)) if seed_var else 0.0


@dataclass(frozen=True)
class Band:
    """The prediction of one target: its centre in u, and the parts of its band (var of r).

    ``var_draws``: constants and exponents, sampled; ``seed_var``: the sources' seed-to-seed
    spread; ``var_sampling``: the per-step sampling noise of the target's B and G;
    ``factor``: the factor the exponents' centre puts on the fitted map's stiffness (the mean
    path's k is the map's times it).
    """

    scale: RewardScale
    centre: np.ndarray
    var_draws: np.ndarray
    seed_var: float
    var_sampling: np.ndarray
    coef: np.ndarray
    warnings: tuple[str, ...]
    exponents: dict[str, Any] = field(default_factory=dict)
    factor: float = 1.0  # the factor on the fitted map's k at the exponents' centre

    @property
    def mean(self) -> np.ndarray:
        """The mean path in reward units (inside the reward range when it is known)."""
        return self.scale.back(self.centre)

    @property
    def variance(self) -> np.ndarray:
        """The band's variance of r without the transfer-error term."""
        return self.var_draws + self.seed_var + self.var_sampling

    def interval(self, z: float, extra: np.ndarray | float = 0.0
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Return mean -+ z sd (``extra``: a further variance of r), inside a known range."""
        half = z * np.sqrt(self.variance + extra)
        lower, upper = self.mean - half, self.mean + half
        if self.scale.bounded:
            lower, upper = np.clip(lower, self.scale.low, self.scale.high), \
                np.clip(upper, self.scale.low, self.scale.high)
        return lower, upper


def band(fit: SweepFit, hp: dict[str, Any], n: int, draws: int, seed: int) -> Band:
    """Return the centre of ``hp``'s path over steps 0..n and the parts of its band.

    See the module docstring; ``draws`` draws of the constants and exponents with generator
    ``seed`` (0: the centre alone, no spread from the draws).
    """
    warnings = []
    scale = reward_scale(fit)
    rng = np.random.default_rng(seed)
    lr_exp, bg_exp = lr_exponent(fit, hp), bg_exponent(fit, hp)
    cov = (fit.cov + fit.cov.T) / 2
    draws_theta = rng.multivariate_normal(fit.theta, cov, size=draws, method="eigh",
                                          check_valid="ignore") if draws else \
        np.empty((0, fit.theta.size))
    lower_b, upper_b = model_bounds(fit.layout)
    draws_theta = np.clip(draws_theta, lower_b, upper_b)
    unseen = fit.layout.starts and fit.layout.r0_index(hp) is None
    if unseen and draws:  # an unseen seed: its r0 is one more draw from the seeds' spread
        r0s = fit.theta[fit.layout.r0_indices]
        shift = rng.normal(0.0, float(np.std(r0s, ddof=1)), size=draws)
        draws_theta[:, fit.layout.r0_indices] += shift[:, None]
        warnings.append(f"seed {hp.get('seed')} not among the sources' seeds "
                        f"{', '.join(map(str, fit.layout.starts))}: r0 is their mean, the band "
                        "carries their spread")
    centre_factor, factors = draw_factors(rng, hp, lr_exp, bg_exp, draws)
    evaluator = Evaluator([hp], [np.arange(n + 1)], fit.layout)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = evaluator.curves(fit.theta, np.array([centre_factor]))[0]
        rows = evaluator.draw_curves(draws_theta, factors) if len(draws_theta) else \
            np.empty((0, n + 1))
    kept = rows[~np.any(np.isnan(rows) if scale.bounded else ~np.isfinite(rows), axis=1)]
    if len(kept) < len(rows) and not scale.bounded:
        warnings.append(f"{len(rows) - len(kept)} of {len(rows)} draws of the constants run "
                        "away (their map diverges) and the reward has no known range to bound "
                        "them: the band leaves them out")
    # a draw whose map runs away counts at the edge it crossed, not as an overflow
    curves = np.clip(kept, scale.low, scale.high) if scale.bounded else kept
    var_draws = (np.diff(np.percentile(curves, [15.87, 84.13], axis=0), axis=0)[0] / 2) ** 2 \
        if len(curves) > 1 else np.zeros(n + 1)
    coef, seed_var = noise_model(fit)
    level_path = np.clip((mean - scale.low) / (scale.high - scale.low) if scale.bounded else
                         mean, 0.01, 0.99)
    b, g = hp.get("batch"), hp.get("group_size")
    if b and g:
        var_sampling = level_path * (1 - level_path) * (coef[0] / b + coef[1] / (b * g))
    else:
        var_sampling = np.zeros(n + 1)
        warnings.append("target B or G unknown: the band leaves out per-step sampling noise")
    exponents = {"tau_lr": lr_exp, "bg": bg_exp}
    return Band(scale, scale.forward(mean), var_draws, seed_var, var_sampling, coef,
                tuple(warnings), exponents, centre_factor)
