"""The least-squares fit of a sweep's shared constants (:func:`fit_sweep`, :class:`SweepFit`).

The shared constants are fitted over every point of every run that did not collapse; their
covariance is the cluster-robust sandwich with one cluster per run. A per-setting fit gives the
measured tau-lr exponent and the test of G-invariance against B G dependence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import chi2

from grpodyn.empirical.logs.sweep_model import (
    PLATEAUS,
    Evaluator,
    Layout,
    kappa_a,
    make_evaluator,
    make_layout,
    model_bounds,
    model_curve,
    model_system,
    start_point,
)
from grpodyn.empirical.logs.sweep_runs import (
    FEWEST_POINTS,
    SweepRun,
    as_runs,
    collapsed,
    unmoved,
)
from grpodyn.ground import InputError
from grpodyn.ground.checks import MAX_STEPS
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.mean_field_map import (
    MeanFieldMap,
)

__all__ = ["ONE_RUN", "LOG_UNDETERMINED", "SweepFit", "fit_sweep", "fit_runs"]

#: Why a sweep of one fitted run quotes no standard errors: the cluster-robust covariance sums
#: each run's score J_c' e_c, which for a single run is the gradient of the fit, zero at its
#: optimum, so the sandwich would give errors of rounding size.
ONE_RUN = "one run fitted, and the cluster-robust error needs two runs or more"
#: A log-scale constant whose error exceeds this (a factor e^3 = 20 either way) is not
#: determined; from 1 it is weakly determined. A level's error beyond twice the reward's scale
#: (its range's width, or the runs' span) is not determined either.
LOG_UNDETERMINED = 3.0


def _sandwich(jac: np.ndarray, residuals: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance (J'J)^-1 (sum_c J_c' e_c e_c' J_c) (J'J)^-1."""
    bread = np.linalg.pinv(jac.T @ jac)
    meat = np.zeros_like(bread)
    for c in np.unique(clusters):
        score = jac[clusters == c].T @ residuals[clusters == c]
        meat += np.outer(score, score)
    n_clusters = len(np.unique(clusters))
    correction = n_clusters / max(n_clusters - 1, 1)
    return correction * bread @ meat @ bread


def _joint_fit(runs: list[SweepRun], layout: Layout
               ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    clusters = np.concatenate([np.full(r.steps.size, i) for i, r in enumerate(runs)])
    observed = np.concatenate([r.reward for r in runs])

    evaluator = make_evaluator(runs, layout)

    def residuals(theta: np.ndarray) -> np.ndarray:
        return np.concatenate(evaluator.curves(theta)) - observed

    lower, upper = model_bounds(layout)
    best = None
    for start in start_point(runs, layout):
        result = least_squares(residuals, np.clip(start, lower + 1e-9, upper - 1e-9),
                               bounds=(lower, upper), x_scale="jac")
        if best is None or result.cost < best.cost:
            best = result
    # a constant held at its bound is not determined by the data: the covariance is that of
    # the others with it fixed there (its row and column zero), not a Gaussian across the bound
    active = best.active_mask != 0
    cov = np.zeros((best.x.size, best.x.size))
    free = np.flatnonzero(~active)
    # the log constants' columns are in reward units, r0's and r*'s not: each taken per unit of
    # the reward's scale, so that a reward of large scale keeps r0's column in the inverse
    scale = np.array([1.0 if name.startswith(("r0", "r_star")) else layout.reward_unit
                      for name in layout.names])[free]
    cov[np.ix_(free, free)] = _sandwich(best.jac[:, free] / scale, best.fun, clusters) / \
        np.outer(scale, scale)
    return best.x, cov, float(best.cost), active


@dataclass(eq=False)
class SweepFit:
    """A joint fit of a sweep.

    Shared constants with errors, per-run residuals, the tau-lr exponent and the test of
    G-invariance against B G dependence (``to_dict`` for JSON).
    """

    runs: list[SweepRun]
    fitted: list[SweepRun]
    theta: np.ndarray
    cov: np.ndarray
    layout: Layout
    per_setting: list[dict[str, Any]]
    warnings: list[str]
    at_bound: np.ndarray  # True where a constant ended at its bound (fixed there, no error)
    options: dict[str, Any] = field(default_factory=dict)  # fit_sweep's keywords of this fit
    # what the band measures once per fit: transfer-error calibrations (keyed by optimizer,
    # draws, seed) and the shared prompt part ("shared_prompt_part")
    calibrations: dict[Any, dict[str, Any]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        constants = self.constants()
        shown = ", ".join(f"{k}={c['value']:.4g}" for k, c in constants.items()
                          if isinstance(c.get("value"), float))
        return (f"SweepFit({len(self.runs)} run{'s' * (len(self.runs) != 1)}, "
                f"{len(self.fitted)} fitted, "
                f"{'/'.join(self.layout.optimizers)}: {shown}, {len(self.warnings)} "
                f"warning{'s' * (len(self.warnings) != 1)})")

    def constants(self) -> dict[str, dict[str, Any]]:
        """Shared constants in physical units with standard errors (delta method for logs).

        A constant's ``status`` says whether the runs determine it; with one run fitted none
        has a standard error (see :data:`ONE_RUN`), and with fewer runs than constants with
        errors plus one the covariance is rank-deficient, which each status adds.
        """
        out = {}
        se = np.sqrt(np.clip(np.diag(self.cov), 0, None))
        lower, upper = model_bounds(self.layout)
        one_run = len(self.fitted) < 2
        for i, name in enumerate(self.layout.names):
            value, err = float(self.theta[i]), float(se[i])
            at_bound = bool(self.at_bound[i]) or np.isclose(value, lower[i], atol=1e-3) or \
                np.isclose(value, upper[i], atol=1e-3)
            entry: dict[str, Any]
            if one_run and not at_bound:  # one cluster: the sandwich is zero by construction
                entry = {"value": self.layout.physical(self.theta, name)
                         if name.startswith("log_") else value, "stderr": None,
                         "status": f"not determined: {ONE_RUN}"}
                if name.startswith("log_"):
                    entry["log_stderr"] = None
                out[name.removeprefix("log_")] = entry
            elif name.startswith("log_"):
                phys = name.removeprefix("log_")
                scaled = self.layout.physical(self.theta, name)
                entry = {"value": scaled, "stderr": float(scaled * err), "log_stderr": err}
                if self.at_bound[i]:  # held at the bound: a bound, no error to quote
                    entry["stderr"] = entry["log_stderr"] = None
                entry["status"] = "at bound: not determined" if at_bound else (
                    "determined" if err < 1.0 else "weakly determined (log error > 1)"
                    if err < LOG_UNDETERMINED else
                    f"not determined (log error {err:.3g}: a factor beyond "
                    f"{np.exp(LOG_UNDETERMINED):.0f} either way)")
                if name == "log_rho_A" and at_bound:
                    entry["status"] = (
                        "at the upper bound: noise-dominated over these B G (k ~ sqrt(B G)); "
                        "a lower bound only" if value > 0 else
                        "at the lower bound: signal-dominated (k independent of B G)")
                if name == "log_rho_p" and at_bound and value < 0:
                    entry["status"] = ("at the lower bound: no between-prompt part measured in "
                                       "Adam's second moment (the B G form)")
                if name in dict(self.layout.units) and at_bound:
                    entry["status"] = (
                        "at the lower bound: no noise drag resolved by these runs (an upper "
                        "bound only)" if value < 0 else "at the upper bound: not determined")
                out[phys] = entry
            elif at_bound:  # r0 or the plateau at the edge of the reward range
                edge = "upper" if value > np.mean(self.layout.reward_range) else "lower"
                out[name] = {"value": value, "stderr": None, "bound": edge,
                             "status": f"not determined: at the {edge} end of the reward range "
                                       f"{list(self.layout.reward_range)}, a bound and not a "
                                       "measurement (the runs have not bent over)"}
            else:
                unit = self.layout.reward_unit
                out[name] = {"value": value, "stderr": err, "status": "determined" if
                             err < 0.5 * unit else "weakly determined" if err < 2 * unit else
                             f"not determined (its error {err:.3g} is beyond twice the reward's "
                             f"scale {unit:.3g})"}
        if self.layout.starts:
            values = self.theta[self.layout.r0_indices]
            out["r0"] = {"value": float(np.mean(values)),
                         "seed_spread": float(np.std(values, ddof=1)),
                         "status": f"derived: mean of the r0 of seeds "
                                   f"{', '.join(map(str, self.layout.starts))} (each seed starts "
                                   f"from its own weights)"}
        for o in self.layout.optimizers:
            stars = self.layout.star_indices(o)
            if len(stars) > 1:
                values = self.theta[stars]
                out[f"r_star_{o}"] = {"value": float(np.mean(values)),
                                      "seed_spread": float(np.std(values, ddof=1)),
                                      "status": "derived: mean of the plateaus of the seeds "
                                                "(one plateau per seed)"}
        with_errors = [n for n, e in out.items() if e.get("stderr") is not None]
        rank = len(self.fitted) - 1  # the runs' scores sum to zero at the fit
        if 1 <= rank < len(with_errors):
            for n in with_errors:
                out[n]["status"] = _weakened(out[n]["status"]) + (
                    f"; rank-deficient jointly: {len(self.fitted)} runs give a covariance of "
                    f"rank <= {rank} for {len(with_errors)} constants, so their errors are not "
                    "all measured")
        misfit = [r2 for r2 in self._r2s if r2 < 0]
        if misfit:  # the runs are named with their R^2 in the run report
            for entry in out.values():
                entry["status"] = _weakened(entry["status"]) + (
                    f"; the shared model fits {len(misfit)} run{'s' * (len(misfit) > 1)} worse "
                    f"than a constant at its mean (R^2 down to {min(misfit):.3g})")
        if "adam" in self.layout.optimizers:
            out["kappa_A_ref"]["bg_ref"] = self.layout.bg_ref
            rho_status = out.get("rho_A", {}).get("status", "not fitted")
            out["kappa_A"] = {"value": kappa_a(self.theta, self.layout),
                              "status": "derived: kappa_A_ref sqrt(1 + rho_p / B_ref + rho_A / "
                                        f"(B G)_ref); rho_A {rho_status}"}
        return out

    def system(self, hparams: dict[str, Any], theta: np.ndarray | None = None) -> MeanFieldMap:
        """Return the fitted mean-field map of a run with ``hparams`` at ``theta`` or the fit."""
        return model_system(hparams, self.theta if theta is None else theta, self.layout)

    def curve(self, hparams: dict[str, Any], steps: int, theta: np.ndarray | None = None
              ) -> np.ndarray:
        """Return the predicted mean reward at steps 0 .. steps of a run with ``hparams``."""
        theta = self.theta if theta is None else theta
        return Evaluator([hparams], [np.arange(steps + 1)], self.layout).curves(theta)[0]

    @cached_property
    def _r2s(self) -> list[float]:
        """The R^2 of every fitted run (the run report's), computed once."""
        return [r["r2"] for r in self.run_report() if r.get("r2") is not None]

    def run_report(self) -> list[dict[str, Any]]:
        """Return, per run, its settings, fitted stiffness and residuals (JSON-ready).

        ``reward_key`` names the metric read as the run's reward (the loader's choice, or
        ``--reward-key``); ``collapsed`` and ``constant`` (a reward that never moved) say why a
        run was left out of the fit; a fitted run has its residuals' ``residual_rms`` and ``r2``.
        """
        out = []
        for run in self.runs:
            entry: dict[str, Any] = {"name": run.name, "hparams": run.hparams,
                                     "reward_key": run.reward_key,
                                     "collapsed": collapsed(run), "constant": unmoved(run)}
            if run in self.fitted:
                model = model_curve(run, self.theta, self.layout)
                resid = run.reward - model
                total = float(np.sum((run.reward - run.reward.mean()) ** 2))
                entry["residual_rms"] = float(np.sqrt(np.mean(resid**2)))
                entry["r2"] = float(1 - np.sum(resid**2) / total) if total > 0 else None
            out.append(entry)
        return out

    def tau_lr_exponent(self) -> dict[str, Any]:
        """Slope of ln tau against ln lr over settings that differ only in lr (per optimizer).

        From the per-setting stiffnesses; expected -1 (derivations ``relaxation_time`` and
        ``adam_tau_lr_exponent``). Every group of settings equal but for lr that holds two
        learning rates or more enters, each with its own intercept and one common slope (a
        weighted regression, weights 1 / se^2 of each setting's log stiffness): the
        inverse-variance mean of the groups' own slopes. Where two groups or more enter,
        ``heterogeneity`` gives each group's slope and Cochran's Q = sum (p_g - p)^2 / se_g^2
        with its chi-square tail probability on groups - 1 degrees of freedom (one exponent for
        every group, as the law says, or not).
        """
        results = {}
        for o in self.layout.optimizers:
            groups: dict[tuple, list[dict[str, Any]]] = {}
            for s in self.per_setting:
                if s["hparams"]["optimizer"] == o and s["factor"] is not None:
                    key = tuple(s["hparams"].get(k) for k in ("group_size", "batch", "momentum",
                                                              "kl", "schedule"))
                    groups.setdefault(key, []).append(s)
            used = [g for g in groups.values() if len({s["hparams"]["lr"] for s in g}) >= 2]
            if not used:
                results[o] = {"value": None, "status": "not determined: fewer than two "
                              "learning rates with a determined stiffness at otherwise equal "
                              "settings"}
                continue
            rows = [s for g in used for s in g]
            x = np.log([s["hparams"]["lr"] for s in rows])
            # tau = c / k; ln k = ln(lr) + ln(factor) + const, so ln tau = -ln lr - ln factor
            y = -(x + np.log([s["factor"] for s in rows]))
            w = 1.0 / np.maximum([s["log_factor_stderr"] for s in rows], 1e-3) ** 2
            member = np.repeat(np.arange(len(used)), [len(g) for g in used])
            design = np.column_stack([x, *(member == i for i in range(len(used)))]).astype(float)
            cov = np.linalg.pinv(design.T @ (w[:, None] * design))
            coef = cov @ design.T @ (w * y)
            results[o] = {"value": float(coef[0]), "stderr": float(np.sqrt(cov[0, 0])),
                          "expected": -1.0, "groups": len(used),
                          "learning_rates": sorted({s["hparams"]["lr"] for s in rows})}
            if len(used) > 1:
                results[o]["heterogeneity"] = _heterogeneity(x, y, w, member, float(coef[0]))
        return results

    def bg_test(self) -> dict[str, Any]:
        """Per-setting stiffness at the same lr against G and B G.

        Does the path depend on B G only (Adam's derivation), on neither (SGD, signal-dominated
        Adam), or on G apart from B G? ``bg_exponent`` is d ln k / d ln (B G) from the weighted
        regression of ln k on ln (B G) and ln G where G and B vary apart; where only one of them
        varies, on ln (B G) alone (``g_exponent_at_fixed_bg`` then says it is not separated).
        """
        results = {}
        for o in self.layout.optimizers:
            rows = [s for s in self.per_setting if s["hparams"]["optimizer"] == o
                    and s["factor"] is not None and s["hparams"].get("group_size")
                    and s["hparams"].get("batch")]
            if not rows:
                continue
            lr = max({s["hparams"]["lr"] for s in rows},
                     key=lambda v: sum(s["hparams"]["lr"] == v for s in rows))
            rows = [s for s in rows if s["hparams"]["lr"] == lr]
            if len({(s["hparams"]["group_size"], s["hparams"]["batch"]) for s in rows}) < 2:
                results[o] = {"status": "not determined: one (G, B) setting only"}
                continue
            bg = np.array([s["hparams"]["group_size"] * s["hparams"]["batch"] for s in rows],
                          dtype=float)
            g = np.array([s["hparams"]["group_size"] for s in rows], dtype=float)
            y = np.log([s["stiffness"] for s in rows])  # measured k of each setting
            se = np.maximum([s["log_factor_stderr"] for s in rows], 1e-3)
            w = 1.0 / se**2
            design = np.column_stack([np.ones_like(y), np.log(bg), np.log(g)])
            rank = np.linalg.matrix_rank(design)
            entry: dict[str, Any] = {"lr": lr, "settings": [
                {"group_size": int(gg), "batch": int(b // gg), "stiffness": float(np.exp(v)),
                 "log_stderr": float(e)} for gg, b, v, e in zip(g, bg, y, se, strict=True)]}
            if rank == 3:
                cov = np.linalg.pinv(design.T @ (w[:, None] * design))
                coef = cov @ design.T @ (w * y)
                entry["bg_exponent"] = {"value": float(coef[1]),
                                        "stderr": float(np.sqrt(cov[1, 1]))}
                entry["g_exponent_at_fixed_bg"] = {"value": float(coef[2]),
                                                   "stderr": float(np.sqrt(cov[2, 2]))}
            elif np.ptp(np.log(bg)) > 0:  # G or B fixed: B G's exponent, G's not separated
                cov = np.linalg.pinv(design[:, :2].T @ (w[:, None] * design[:, :2]))
                coef = cov @ design[:, :2].T @ (w * y)
                entry["bg_exponent"] = {"value": float(coef[1]),
                                        "stderr": float(np.sqrt(cov[1, 1]))}
                entry["g_exponent_at_fixed_bg"] = {
                    "value": None, "stderr": None,
                    "status": "not determined: G and B do not vary apart at this lr"}
            pairs = []
            for i in range(len(rows)):
                for j in range(i + 1, len(rows)):
                    if bg[i] == bg[j] and g[i] != g[j]:
                        z = (y[i] - y[j]) / np.hypot(se[i], se[j])
                        pairs.append({"bg": int(bg[i]), "g": [int(g[i]), int(g[j])],
                                      "log_ratio": float(y[i] - y[j]), "z": float(z)})
            entry["same_bg_pairs"] = pairs
            if o == "adam" and self.layout.fit_rho and not self.layout.has("log_rho_p"):
                rho = float(np.exp(self.theta[self.layout.index("log_rho_A")]))
                mid = float(np.exp(np.mean(np.log(bg))))
                # the exponent depends on B G alone: evaluated at B = mid, G = 1
                entry["predicted_bg_exponent"] = float(
                    compiled("adam_stiffness_bg_exponent")(rho, mid, 1))
                entry["predicted_g_exponent_at_fixed_bg"] = 0.0
            elif o == "adam" and self.layout.fit_rho and "bg_exponent" in entry:
                # the split v_hat: the same regression on the fitted map's own k (D = 1)
                model = np.log(Evaluator([s["hparams"] for s in rows],
                                          [np.arange(2)] * len(rows),
                                          self.layout).stiffness(self.theta))
                coef = np.linalg.lstsq(design[:, :rank], model, rcond=None)[0]
                entry["predicted_bg_exponent"] = float(coef[1])
                entry["predicted_g_exponent_at_fixed_bg"] = float(coef[2]) if rank == 3 else 0.0
            else:
                entry["predicted_bg_exponent"] = 0.0
                entry["predicted_g_exponent_at_fixed_bg"] = 0.0
            if self.layout.units:
                entry["note"] = ("per-setting k with the noise drag held at the joint fit: the "
                                 "drag, not k, carries the B and G dependence of the gain that "
                                 "the noise explains")
            results[o] = entry
        return results

    def stability(self) -> list[dict[str, Any]]:
        """Compare each collapsed run's lr with the slow-mode limit of the fitted map.

        Each entry also says which limit the data constrain.
        """
        out = []
        healthy = self.fitted
        for run in self.runs:
            if not collapsed(run):
                continue
            h = run.hparams
            system = self.system(h)
            entry = {"name": run.name, "lr": h["lr"], "slow_mode_lr_max": system.lr_max}
            stable_lrs = [r.hparams["lr"] for r in healthy
                          if r.hparams["optimizer"] == h["optimizer"]]
            if h["lr"] < system.lr_max:
                step = system.stiffness / system.kappa  # k per unit curvature at this lr
                bound = float(system.stiffness_max / step)
                entry["limit"] = "stiff-mode"
                entry["explanation"] = (
                    f"the run collapsed at lr {h['lr']:.3g}, {system.lr_max / h['lr']:.3g}x "
                    f"below the slow (reward) mode's limit: the collapse constrains a stiff mode "
                    f"of curvature >= {bound:.3g} (units of kappa)")
                entry["stiff_curvature_lower_bound"] = bound
                below = [lr for lr in stable_lrs if lr < h["lr"]]
                if below:
                    ok = self.system({**h, "lr": max(below)})
                    entry["stiff_curvature_upper_bound"] = float(
                        ok.stiffness_max / (ok.stiffness / ok.kappa))
            else:
                entry["limit"] = "slow-mode"
                entry["explanation"] = (f"lr {h['lr']:.3g} is past the slow mode's limit "
                                        f"{system.lr_max:.3g}: consistent with the fitted map")
            out.append(entry)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the whole fit as the JSON object of ``grpodyn sweep``."""
        return {"constants": self.constants(), "runs": self.run_report(),
                "tau_lr_exponent": self.tau_lr_exponent(), "bg_test": self.bg_test(),
                "stability": self.stability(),
                "per_setting": [{k: v for k, v in s.items() if k != "runs"}
                                for s in self.per_setting],
                "n_runs": len(self.runs), "n_fitted": len(self.fitted),
                "warnings": self.warnings}


def _heterogeneity(x: np.ndarray, y: np.ndarray, w: np.ndarray, member: np.ndarray,
                   pooled: float) -> dict[str, Any]:
    """Each group's own weighted slope of y on x, and Cochran's Q against the pooled slope."""
    slopes, errors = [], []
    for g in range(int(member.max()) + 1):
        xs, ys, ws = x[member == g], y[member == g], w[member == g]
        xc = xs - np.sum(ws * xs) / np.sum(ws)
        sxx = float(np.sum(ws * xc**2))
        slopes.append(float(np.sum(ws * xc * ys) / sxx))
        errors.append(float(1.0 / np.sqrt(sxx)))
    q = float(np.sum(((np.array(slopes) - pooled) / np.array(errors)) ** 2))
    return {"slopes": slopes, "stderrs": errors, "q": q, "dof": len(slopes) - 1,
            "p_value": float(chi2.sf(q, len(slopes) - 1))}


def _per_setting(runs: list[SweepRun], theta: np.ndarray, layout: Layout
                 ) -> list[dict[str, Any]]:
    """Return k of each setting free (as a factor on the joint model's k), r0 and r* held."""
    settings: dict[tuple, list[SweepRun]] = {}
    for run in runs:
        settings.setdefault(run.setting, []).append(run)
    out = []
    for group in settings.values():
        observed = np.concatenate([r.reward for r in group])
        clusters = np.concatenate([np.full(r.steps.size, i) for i, r in enumerate(group)])

        evaluator = make_evaluator(group, layout)

        def residuals(p: np.ndarray, evaluator: Evaluator = evaluator,
                      observed: np.ndarray = observed) -> np.ndarray:
            return np.concatenate(evaluator.curves(theta, np.exp(p[0]))) - observed

        result = least_squares(residuals, np.zeros(1), bounds=([-12.0], [12.0]))
        cov = _sandwich(result.jac, result.fun, clusters) if len(group) > 1 else \
            np.linalg.pinv(result.jac.T @ result.jac) * 2 * result.cost / max(observed.size - 1, 1)
        se = float(np.sqrt(max(cov[0, 0], 0.0)))
        at_bound = abs(result.x[0]) > 11.9
        system = model_system(group[0].hparams, theta, layout)
        factor = float(np.exp(result.x[0]))
        out.append({"hparams": {k: v for k, v in group[0].hparams.items() if k != "seed"},
                    "n_runs": len(group), "factor": None if at_bound else factor,
                    "log_factor_stderr": se, "stiffness": system.stiffness * factor,
                    "tau": system.damping / (system.stiffness * factor)})
    return out


def _check_length(run: SweepRun) -> None:
    """Refuse a run under FEWEST_POINTS reward points, or one spanning more than MAX_STEPS."""
    if run.steps.size < FEWEST_POINTS:
        raise InputError(f"{run.name}: only {run.steps.size} reward points (need >= "
                         f"{FEWEST_POINTS})")
    span = float(np.max(run.steps))
    if not span <= MAX_STEPS:  # the map is iterated over every step, logged or not
        raise InputError(f"{run.name}: spans {span:.6g} steps (logged steps {run.first_step:g} "
                         f"to {run.first_step + span:g}); the sweep fit iterates the map over "
                         f"every step of a run, at most {MAX_STEPS:,} (a longer run would fit "
                         f"for hours): give the run's first {MAX_STEPS:,} steps")


def fit_sweep(runs: list[SweepRun], *, finite_group: bool = True, noise_drag: bool = True,
              prompt_noise: bool = True, plateau: str = "shared") -> SweepFit:
    """Fit the shared constants of a sweep (see the module docstring).

    Parameters
    ----------
    runs : list of SweepRun or of log paths
        The runs (a path is loaded by :func:`~.sweep_runs.load_sweep_run`); those that
        collapsed and those whose reward never moved (:func:`~.sweep_runs.unmoved`) are left out
        of the fit with a warning. The same run twice is refused, and so is a run that spans
        more than :data:`grpodyn.ground.checks.MAX_STEPS` steps.
    finite_group : bool
        Put the finite-G drift factor 1 - p^G - (1-p)^G on the force (derivations
        ``sgd_stiffness_finite_group``, ``adam_stiffness_finite_group``); False gives the
        large-G map.
    noise_drag : bool
        Let the sampling noise cost expected reward at second order (derivations
        ``sgd_noise_drag``, ``adam_noise_drag``): SGD's h sigma_p^2 and h sigma_c^2, Adam's
        h_noise, fitted where B and G both vary (False: the map without the noise drag).
    prompt_noise : bool
        Split Adam's noise ratio into a between-prompt rho_p (per prompt) and rho_A (per
        completion): ``adam_stiffness_split``, fitted where B and G both vary.
    plateau : {"shared", "per_seed"}
        One r* per optimizer, or one per optimizer and seed (runs of one seed start from the same
        weights; an unseen seed gets the mean). The default is "shared": a plateau per seed
        did not help the design score (studies/transfer/findings.md section 6d).

    Returns
    -------
    SweepFit
        The joint fit.
    """
    return fit_runs(as_runs(runs), finite_group=finite_group, noise_drag=noise_drag,
                    prompt_noise=prompt_noise, plateau=plateau)


def fit_runs(runs: list[SweepRun], *, finite_group: bool = True, noise_drag: bool = True,
             prompt_noise: bool = True, plateau: str = "shared") -> SweepFit:
    """Fit the shared constants of ``runs``, distinct sweep runs as ``as_runs`` returns them.

    :func:`fit_sweep` with its keywords and their defaults, for a caller whose runs are
    converted and checked already (a transfer's sources, a fit's runs refitted without one
    setting): converting them again would repeat the loading and the pairwise comparison.

    Parameters
    ----------
    runs : list of SweepRun
        Distinct runs (:func:`~grpodyn.empirical.logs.sweep_runs.as_runs`).
    finite_group, noise_drag, prompt_noise, plateau
        As for :func:`fit_sweep`.

    Returns
    -------
    SweepFit
        The joint fit.

    Raises
    ------
    InputError
        No runs, a run under 10 points or over :data:`grpodyn.ground.checks.MAX_STEPS` steps, no run
        left to fit, or an unknown ``plateau``.
    """
    if not runs:
        raise InputError("a sweep needs at least one run")
    for run in runs:
        _check_length(run)
    warnings = []
    fitted = [r for r in runs if not collapsed(r) and not unmoved(r)]
    for run in runs:
        if collapsed(run):
            warnings.append(f"{run.name}: collapsed (late reward under half the early one); "
                            "left out of the fit, compared with the stability limit")
        elif unmoved(run):
            warnings.append(f"{run.name}: the reward never moved (constant at "
                            f"{run.reward[0]:g}), so it says nothing of its stiffness; left "
                            "out of the fit")
    keys = {r.reward_key for r in runs}
    if len(keys) > 1:  # a joint fit shares r0, the plateau and kappa across the runs
        warnings.append("the runs read their reward from different metrics ("
                        + ", ".join(f"{r.name}: {r.reward_key!r}" for r in runs) + "): the fit "
                        "shares one start, one plateau and one stiffness, which supposes one "
                        "reward on one task")
    if not fitted:
        raise InputError("no run of the sweep to fit: " + "; ".join(
            f"{r.name} collapsed" if collapsed(r) else f"{r.name} kept a constant reward"
            for r in runs))
    if plateau not in PLATEAUS:
        raise InputError(f"plateau must be one of {', '.join(PLATEAUS)}, got {plateau!r}")
    layout = make_layout(fitted, finite_group=finite_group, noise_drag=noise_drag,
                     prompt_noise=prompt_noise, plateau=plateau)
    if not layout.bounded:
        warnings.append(f"reward range {layout.range_source}: r0 and the plateau are not "
                        "bounded" + (", and the finite-G factor 1 - p^G - (1-p)^G (which needs "
                                     "the reward as a success rate) is left out" if finite_group
                                     else ""))
    if "adam" in layout.optimizers and not layout.fit_rho:
        warnings.append("all Adam runs share one B G: the noise ratio rho_A is not determined "
                        "(signal-dominated Adam assumed: k independent of G and B)")
    theta, cov, _, at_bound = _joint_fit(fitted, layout)
    if len(fitted) < 2:
        warnings.append(f"the constants have no standard errors: {ONE_RUN} (one run's points "
                        "are correlated along its path, and its score sums to zero at the fit); "
                        "a transfer's band leaves out their uncertainty")
    for i in np.flatnonzero(at_bound):
        name = layout.names[i]
        if name.startswith("r_star") or name.startswith("r0"):
            warnings.append(f"{name} at the edge of the reward range {list(layout.reward_range)}:"
                            " not determined by the runs (a bound, held there; the band does "
                            "not carry its uncertainty)")
    per_setting = _per_setting(fitted, theta, layout)
    options = {"finite_group": finite_group, "noise_drag": noise_drag,
               "prompt_noise": prompt_noise, "plateau": plateau}
    return SweepFit(runs, fitted, theta, cov, layout, per_setting, warnings, at_bound, options)


def _weakened(status: str) -> str:
    """Return a constant's status with "determined" at its head lowered to "weakly determined".

    Said where the errors behind it are not all measured (a rank-deficient covariance) or the
    shared model does not describe a fitted run; other statuses are returned as they are.
    """
    return "weakly " + status if status.startswith("determined") else status
