"""The two exponents a transfer leans on: the law's, the sources' measurement, the one used.

A transfer carries the map's stiffness from the sources to a new setting through two scaling
laws; each is compared with what the sources measure before it is used.

The tau-lr exponent p (tau ~ lr^p). The law says p = -1 (derivations ``relaxation_time``,
``adam_tau_lr_exponent``: the step, and so the stiffness, is proportional to lr), with the
spread :data:`TAU_LR_PRIOR_SD` that the design sweeps show around it. The sources measure p
(``SweepFit.tau_lr_exponent``) where they hold two learning rates or more at otherwise equal
settings, p_hat +- se. A measurement with se >= :data:`UNRESOLVED_SE` does not resolve the
exponent (-4.4 +- 51 from two learning rates a factor 2 apart): the law's -1 with its spread is
used, as with one learning rate. Otherwise, with z = (p_hat + 1) / sqrt(se^2 + TAU_LR_PRIOR_SD^2):

- |z| <= 2: the measurement agrees with the law; the measurement is used;
- |z| > 2 and p_hat + 2 se < 0: tau falls with lr, as the law says, at another rate; the
  measured rate is used (the law's form, its exponent fitted: an Adam v_hat or a curvature that
  changes with lr bends the rate, not its direction);
- the sources hold two groups of learning rates or more (settings equal but for lr) whose own
  exponents disagree beyond 2 standard errors (Cochran's Q, ``SweepFit.tau_lr_exponent``): the
  law's one exponent does not describe the sweep; fall back, as below;
- |z| > 2 and p_hat + 2 se >= 0: the sources exclude the law's -1 and do not show tau falling
  with lr at all. No step of the map, whose stiffness grows with lr, makes learning slower or
  no faster at a larger step: the law does not describe this sweep's learning rate (a trainer
  whose clip bounds how far one rollout moves the policy, whatever the step, reads so). The
  transfer says so and falls back to the nearest source with a band that covers the sources'
  spread (:func:`contradicted`).

Adam's B G exponent b = d ln k / d ln (B G). The law (derivation ``adam_stiffness_bg_exponent``,
b = rho_A / (2 (B G + rho_A))) places it in [0, 1/2] (:data:`BG_EXPONENT_RANGE`: signal- to
noise-dominated); where the sources hold two B G the map carries it through its fitted rho_A,
and where the sources hold two B G at one lr their per-setting stiffnesses measure it directly
(``SweepFit.bg_test``), b_hat +- se. With b_law the fitted map's exponent over the same B G:

- no direct measurement: the fitted law (rho_A) alone;
- b_hat more than 2 se outside [0, 1/2]: the law does not describe the sweep's B G; fall back;
- |b_hat - b_law| <= 2 se: they agree; the fitted law is used unchanged;
- otherwise the measurement with the law's range as its prior: b ~ N(b_hat, se^2) truncated to
  [0, 1/2], so that a precise measurement sets b and an imprecise one leaves the law's range;
  the map's stiffness is multiplied by (B G / bg_ref)^(b - b_law), bg_ref the geometric mean of
  the measured B G (where the map was fitted to them), b drawn from the truncated normal.

Where the sources hold one B G and the target's differs, b is not determined: drawn from the
law's range, and the mean falls back to the nearest source (as before a measurement can exist).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm, truncnorm

from grpodyn.empirical.logs.sweep_fit import SweepFit

__all__ = ["TAU_LR_PRIOR_SD", "BG_EXPONENT_RANGE", "UNRESOLVED_SE", "LAW_Z", "law_z",
           "lr_exponent", "bg_exponent", "draw_factors", "contradicted"]

#: Standard deviation of the tau-lr exponent when the sources hold one learning rate: the root
#: mean square of p + 1 over the four design sweeps (tiny_grid and tiny_grid2, SGD and Adam:
#: -1.17, -0.90, -0.98, -0.90), studies/transfer/results/design_exponents.json.
TAU_LR_PRIOR_SD = 0.11
#: The range of Adam's B G exponent rho_A / (2 (B G + rho_A)): 0 (signal-dominated) to 1/2
#: (noise-dominated), derivation ``adam_stiffness_bg_exponent``.
BG_EXPONENT_RANGE = (0.0, 0.5)
#: standard errors beyond which a measurement and the law disagree
LAW_Z = 2.0
#: A measured tau-lr exponent with a standard error this large or larger (tau's lr-dependence
#: anywhere from none to twice the law's) is not used: the law's -1 with its spread is
UNRESOLVED_SE = 1.0


def law_z(value: float, stderr: float) -> float:
    """Return z = (p_hat + 1) / sqrt(se^2 + TAU_LR_PRIOR_SD^2): a tau-lr exponent against -1.

    The distance the transfer tests (module docstring): the measurement's error and the design
    sweeps' spread around the law together; within :data:`LAW_Z` they agree.
    """
    return (value + 1.0) / float(np.hypot(stderr, TAU_LR_PRIOR_SD))


def law_reading(value: float, stderr: float, heterogeneity: dict[str, Any] | None = None) -> str:
    """Return how the transfer reads a measured tau-lr exponent (module docstring).

    ``unresolved`` (its error :data:`UNRESOLVED_SE` or more: the law's -1 is used),
    ``heterogeneous`` (the groups of learning rates disagree: the nearest source), ``agrees``
    (within :data:`LAW_Z` sd of the law), ``falls`` (beyond, but tau falls with lr: the
    measurement is used) or ``contradicts`` (the nearest source).
    """
    if stderr >= UNRESOLVED_SE:
        return "unresolved"
    if heterogeneity is not None and heterogeneity["p_value"] < 2 * norm.sf(LAW_Z):
        return "heterogeneous"
    if abs(law_z(value, stderr)) <= LAW_Z:
        return "agrees"
    return "falls" if value + LAW_Z * stderr < 0 else "contradicts"


def lr_exponent(fit: SweepFit, hp: dict[str, Any]) -> dict[str, Any]:
    """Return the tau-lr exponent the transfer uses: centre, spread, lr_ref, status, verdict.

    See the module docstring. ``contradicts_law`` is True where the sources exclude the law's
    -1 and do not show tau falling with lr; ``z_law`` is z of the module docstring.
    """
    optimizer = hp["optimizer"]
    lrs = [r.hparams["lr"] for r in fit.fitted if r.hparams["optimizer"] == optimizer]
    lr_ref = float(np.exp(np.mean(np.log(lrs))))
    measured = fit.tau_lr_exponent().get(optimizer, {})
    if measured.get("value") is None or measured.get("stderr") is None:
        # the sweep's own reason: one learning rate, or too few with a determined stiffness
        why = measured.get("status", "").removeprefix("not determined: ") or \
            "the sources hold one learning rate at otherwise equal settings"
        return {"value": -1.0, "stderr": TAU_LR_PRIOR_SD, "lr_ref": lr_ref,
                "status": f"not determined ({why}): the map's -1 with a spread of "
                          f"{TAU_LR_PRIOR_SD} (the design sweeps' exponents around -1)"}
    value, se = float(measured["value"]), float(measured["stderr"])
    spread = measured.get("heterogeneity")
    reading = law_reading(value, se, spread)
    if reading == "unresolved":
        return {"value": -1.0, "stderr": TAU_LR_PRIOR_SD, "lr_ref": lr_ref,
                "measured": {"value": value, "stderr": se},
                "status": f"not determined (the sources' error on it is {UNRESOLVED_SE:g} or "
                          f"more): their learning rates give {value:.3g} +- {se:.3g}, which does "
                          f"not resolve how tau scales with lr; the map's -1 with a spread of "
                          f"{TAU_LR_PRIOR_SD} (the design sweeps' exponents around -1)"}
    z = law_z(value, se)
    rates = ", ".join(f"{v:.3g}" for v in measured["learning_rates"])
    out = {"value": value, "stderr": se, "lr_ref": lr_ref, "law": -1.0, "z_law": z,
           "contradicts_law": False}
    if reading == "heterogeneous":
        out["contradicts_law"] = True
        out["status"] = (f"contradicts the law: the sources' groups of learning rates give "
                         f"exponents {', '.join(f'{v:.2f}' for v in spread['slopes'])} that "
                         f"disagree (Q {spread['q']:.1f} on {spread['dof']} dof, p "
                         f"{spread['p_value']:.2g}); no one exponent describes this sweep's lr, "
                         "the mean falls back to the nearest source")
    elif reading == "agrees":
        out["status"] = (f"determined by the sources' learning rates {rates}; agrees with the "
                         f"law's -1 ({z:+.1f} sd of {np.hypot(se, TAU_LR_PRIOR_SD):.2g}: the "
                         f"sources' error {se:.2g} and the design sweeps' spread "
                         f"{TAU_LR_PRIOR_SD:g} around the law together)")
    elif reading == "falls":
        out["status"] = (f"determined by the sources' learning rates {rates}; tau falls with "
                         "lr, the direction the law says, but "
                         f"{'faster' if value < -1 else 'slower'} than its -1, by {abs(z):.1f} "
                         f"sd (the sources' error and the design sweeps' spread "
                         f"{TAU_LR_PRIOR_SD:g} around the law together); the measured exponent "
                         "is used")
    else:
        out["contradicts_law"] = True
        out["status"] = (f"contradicts the law: the sources' learning rates {rates} give "
                         f"{value:.2f} +- {se:.2f}, {z:+.1f} sd from the law's -1, and do not "
                         "show tau falling with lr; the law does not describe this sweep's lr, "
                         "the mean falls back to the nearest source")
    return out


def _measured_bg(fit: SweepFit) -> dict[str, Any] | None:
    """Return Adam's B G exponent as the sources' stiffnesses at one lr measure it, or None."""
    test = fit.bg_test().get("adam", {})
    measured = test.get("bg_exponent")
    if not measured or measured.get("stderr") is None:
        return None
    products = [s["group_size"] * s["batch"] for s in test["settings"]]
    return {"value": float(measured["value"]), "stderr": float(measured["stderr"]),
            "lr": test["lr"], "law": float(test["predicted_bg_exponent"]),
            "bg_ref": float(np.exp(np.mean(np.log(products))))}


def _against_measurement(fit: SweepFit, out: dict[str, Any]) -> dict[str, Any]:
    """Compare the fitted law's B G exponent ``out`` with the direct measurement (docstring)."""
    measured = _measured_bg(fit)
    out["measured"] = measured
    out["contradicts_law"] = False
    if measured is None:
        out["status"] += "; no direct measurement (two B G at one lr)"
        return out
    b, se, law = measured["value"], measured["stderr"], measured["law"]
    lo, hi = BG_EXPONENT_RANGE
    where = f"the sources' stiffness at lr {measured['lr']:.3g} gives {b:.2f} +- {se:.2f}"
    if b + LAW_Z * se < lo or b - LAW_Z * se > hi:
        out["contradicts_law"] = True
        out["status"] = (f"contradicts the law: {where}, outside the law's range "
                         f"{list(BG_EXPONENT_RANGE)} by more than {LAW_Z:g} standard errors; the "
                         "mean falls back to the nearest source")
    elif abs(b - law) <= LAW_Z * se:
        out["status"] += (f"; at the sources' B G {measured['bg_ref']:.3g} the law's {law:.2f} "
                          f"agrees with the direct measurement ({where})")
    else:
        a, c = (lo - b) / se, (hi - b) / se
        mean, var = (float(v) for v in truncnorm.stats(a, c, loc=b, scale=se, moments="mv"))
        out["correction"] = {"value": mean, "stderr": float(np.sqrt(var)), "law": law,
                             "bg_ref": measured["bg_ref"], "measured": b, "measured_stderr": se,
                             "form": "k x (B G / bg_ref)^(b - law), b ~ N(measured, "
                                     "measured_stderr^2) truncated to the law's range"}
        out["law_value"], out["value"] = out["value"], mean
        out["status"] = (f"measured: {where}, {abs(b - law) / se:.1f} se from the fitted law's "
                         f"{law:.2f}; the measurement within the law's range "
                         f"{list(BG_EXPONENT_RANGE)} ({mean:.2f} +- {np.sqrt(var):.2f}) "
                         f"corrects the map's k by (B G / {measured['bg_ref']:.3g})^(b - "
                         f"{law:.2f})")
    return out


def bg_exponent(fit: SweepFit, hp: dict[str, Any]) -> dict[str, Any]:
    """Return how Adam's B G law enters: fitted, corrected, not used, undetermined or contradicted.

    See the module docstring. ``range`` is present where the exponent is not determined (one
    B G among the sources), ``correction`` where the direct measurement corrects the fitted law,
    ``contradicts_law`` True where the measurement lies outside the law's range.
    """
    if hp["optimizer"] != "adam" or not (hp.get("batch") and hp.get("group_size")):
        return {"status": "not used (SGD: the finite-G factor of the map carries G)"
                if hp["optimizer"] != "adam" else "not used: target B or G unknown"}
    products = sorted({r.hparams["batch"] * r.hparams["group_size"] for r in fit.fitted
                       if r.hparams["optimizer"] == "adam"})
    target = hp["batch"] * hp["group_size"]
    if fit.layout.fit_rho:
        rho = fit.constants()["rho_A"]
        value = rho["value"] / (2 * (target + rho["value"]))
        return _against_measurement(fit, {
            "value": float(value), "status": f"determined by rho_A ({rho['status']}) over the "
            f"sources' B G {', '.join(map(str, products))}", "bg_ref": fit.layout.bg_ref})
    if target in products:
        return {"value": None, "status": "not needed: the target's B G is the sources'"}
    return {"value": None, "range": list(BG_EXPONENT_RANGE), "bg_ref": float(products[0]),
            "status": f"not determined: the sources share one B G ({products[0]}) and the "
                      f"target's is {target}; the exponent is drawn from the law's range "
                      f"{list(BG_EXPONENT_RANGE)} and the mean falls back to the nearest source"}


def contradicted(exponents: dict[str, dict[str, Any]]) -> str | None:
    """Return the name of the first exponent whose law the sources contradict or leave open.

    "tau_lr" or "bg" where the mean must fall back to the nearest source (a contradicted law, or
    a B G exponent not determined), else None.
    """
    if exponents["tau_lr"].get("contradicts_law"):
        return "tau_lr"
    bg = exponents["bg"]
    return "bg" if bg.get("contradicts_law") or "range" in bg else None


def draw_factors(rng: np.random.Generator, hp: dict[str, Any], lr_exp: dict[str, Any],
                 bg_exp: dict[str, Any], draws: int) -> tuple[float, np.ndarray]:
    """Return the target's stiffness factor at the exponents' centre, and one per draw.

    The factor multiplies the fitted map's k: (lr / lr_ref)^-(p + 1), times (B G / bg_ref)^b
    for an undetermined B G exponent (b uniform on the law's range) or (B G / bg_ref)^(b - law)
    for a measured one that corrects the law (b from its truncated normal).
    """
    log_lr = float(np.log(hp["lr"] / lr_exp["lr_ref"]))
    p = rng.normal(lr_exp["value"], lr_exp["stderr"], size=draws)
    centre, factors = -(lr_exp["value"] + 1.0) * log_lr, -(p + 1.0) * log_lr
    if "range" in bg_exp:  # an undetermined B G exponent: the law's whole range
        log_bg = float(np.log(hp["batch"] * hp["group_size"] / bg_exp["bg_ref"]))
        b = rng.uniform(*bg_exp["range"], size=draws)
        centre += float(np.mean(bg_exp["range"])) * log_bg
        factors = factors + b * log_bg
    elif "correction" in bg_exp:  # a measured exponent within the law's range
        corr = bg_exp["correction"]
        log_bg = float(np.log(hp["batch"] * hp["group_size"] / corr["bg_ref"]))
        lo, hi = BG_EXPONENT_RANGE
        se = corr["measured_stderr"]
        b = truncnorm.rvs((lo - corr["measured"]) / se, (hi - corr["measured"]) / se,
                          loc=corr["measured"], scale=se, size=draws, random_state=rng)
        centre += (corr["value"] - corr["law"]) * log_bg
        factors = factors + (b - corr["law"]) * log_bg
    return float(np.exp(centre)), np.exp(factors)
