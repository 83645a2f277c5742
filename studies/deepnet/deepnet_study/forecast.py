"""Predictions from the measured constants with the numerics (docs/theory.md sections 3-5).

Only :func:`_theory` calls the project's prediction engine (keyword arguments, one place to adapt
when its parameter names change). Stiffness conventions (see :mod:`.measure`): the stability
thresholds use the stiff curvature h_max of the parameter map (k = lr h_max); the relaxation time
of the reward uses kappa, the slope of the drift (the definition of docs/theory.md), tau = c / (lr
kappa).
"""

from __future__ import annotations

import math
from typing import Any

from grpodyn.numerics.predict import predict
from grpodyn.numerics.two_mode import (
    first_unstable_refresh,
    staleness_max,
    two_mode_prediction,
)

__all__ = ["LR_GRID", "REFRESH_GRID", "STALENESS_GRID", "MOMENTUM_GRID", "predict_model",
           "plan_settings", "two_mode_plan", "predict_two_mode", "TWO_MODE_LR_GRID",
           "predict_two_mode_staleness"]

LR_GRID = (0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
REFRESH_GRID = (1, 2, 3, 4, 6, 8, 12, 16)
STALENESS_GRID = (0, 1, 2, 3, 4, 6, 8)
MOMENTUM_GRID = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def _theory(*, lr: float, momentum: float, curvature: float, refresh: int = 1) -> Any:
    """Return the project's prediction for heavy-ball SGD at ``lr`` with curvature ``curvature``."""
    return predict(lr=lr, momentum=momentum, kappa=curvature, refresh=refresh)


def plan_settings(lr_critical: float) -> dict[str, float]:
    """Choose the base lr of the refresh, staleness and momentum sweeps, fixed before the runs.

    The grid lr nearest (in log) to 1/8 of the critical lr (momentum 0), where the curvature
    along the update, h_c = 2 / lr_critical, predicts a first unstable refresh interval near
    2 / (lr h_c) = 8, inside the refresh grid.
    """
    target = lr_critical / 8
    base = min(LR_GRID, key=lambda lr: abs(math.log(lr / target)))
    return {"lr": base}


def predict_model(model: str, measured: dict[str, Any]) -> list[dict[str, Any]]:
    """Prediction items of one model size from its measurements (see the stated format)."""
    spectrum = measured["spectrum"]
    h_max = spectrum["top_eigenvalues"][0]
    h_cv = spectrum["top_cross_validated"]
    lr_c = measured["critical_lr"]["value"]
    h_c = 2.0 / lr_c  # critical sharpness (arXiv 2601.16979): lambda_c = 2 / eta_c
    kappa = measured["kappa_fit"]["kappa"]
    kappa_g = measured["kappa_from_curvature_along_update"]
    items: list[dict[str, Any]] = []

    def add(quantity: str, setting: dict[str, Any], value: Any, **extra: Any) -> None:
        items.append({"model": model, "quantity": quantity, "setting": setting, "value": value,
                      **extra})

    for beta in (0.0, 0.9):
        k_max = _theory(lr=1.0, momentum=beta, curvature=h_max).stiffness_max
        add("lr_max", {"momentum": beta}, k_max / h_max, source="top Hessian eigenvalue")
        add("lr_max_critical", {"momentum": beta}, k_max / h_c,
            source="critical sharpness 2 / lr_critical along the expected update")
        if h_cv > 0:
            add("lr_max_cross_validated", {"momentum": beta}, k_max / h_cv,
                source="cross-validated top eigenvalue")
    base = plan_settings(lr_c)["lr"]
    for beta in MOMENTUM_GRID[:1] + (0.5, 0.9):
        for lr in LR_GRID:
            for name, curv in (("relaxation_time", kappa), ("relaxation_time_hessian", kappa_g)):
                if curv > 0:
                    tau = _theory(lr=lr, momentum=beta, curvature=curv).tau
                    add(name, {"lr": lr, "momentum": beta}, tau)
                else:
                    add(name, {"lr": lr, "momentum": beta}, None,
                        status="undetermined", reason=f"measured curvature {curv:.3g} <= 0")
    for suffix, curv in (("", h_max), ("_critical", h_c)):
        on_policy = _theory(lr=base, momentum=0.0, curvature=curv)
        extra = {"stiffness": on_policy.stiffness}
        if on_policy.refresh_max is None:
            extra.update(status="unstable on-policy", reason="k >= 2 (1 + momentum): K = 1 and "
                         "staleness 0 are already unstable")
        add("refresh_max" + suffix, {"lr": base, "momentum": 0.0, "mode": "hold"},
            on_policy.refresh_max, **extra)
        add("staleness_max" + suffix, {"lr": base, "momentum": 0.0}, on_policy.staleness_max,
            **extra)
    add("refresh_max", {"lr": base, "momentum": 0.0, "mode": "reuse"}, None,
        status="no threshold", reason="importance-corrected reuse keeps the force current "
        "(k_c = k, k_l = 0): no refresh threshold (bandit lab finding)")
    k_soft = base * kappa if kappa > 0 else float("nan")
    for label, k in (("slow", k_soft), ("stiff", base * h_max),
                     ("stiff_critical", base * h_c)):
        # oscillatory when k > (1 - sqrt(momentum))^2 (docs/theory.md section 4)
        if not k > 0:
            add("oscillation_momentum", {"lr": base, "mode": label}, None,
                status="undetermined", reason="measured curvature <= 0")
            continue
        value = (1.0 - math.sqrt(k)) ** 2 if k < 1 else 0.0
        add("oscillation_momentum", {"lr": base, "mode": label}, value, stiffness=k,
            rule="oscillatory for momentum > (1 - sqrt(lr * curvature))^2")
    return items


#: lr grid of the two-mode plans: LR_GRID continued four halvings down (the 1m model's critical
#: lr, 0.025 or below, sits at the bottom of LR_GRID)
TWO_MODE_LR_GRID = tuple(LR_GRID[0] * 2.0**n for n in range(-4, 0)) + LR_GRID


def _snap(lr: float) -> float:
    """Return the two-mode grid lr nearest to ``lr`` in log."""
    return min(TWO_MODE_LR_GRID, key=lambda g: abs(math.log(g / lr)))


def two_mode_plan(lr_critical: float, lr_max_stiff: float) -> dict[str, Any]:
    """Fix, before the runs, the settings the two-mode predictions are tested at.

    Relaxation at (lr_hi, 0), (lr_lo, 0), (lr_lo, 0.5), lr_hi and lr_lo the lrs of
    ``TWO_MODE_LR_GRID`` nearest to lr_critical / 8 and / 16; the lr sweep (new sizes) at
    momenta 0 and 0.9 on the four grid lrs from two grid steps below to one above the stiff
    mode's predicted lr_max at each momentum.
    """
    grid = TWO_MODE_LR_GRID
    hi, lo = _snap(lr_critical / 8), _snap(lr_critical / 16)
    sweep = {}
    for beta in (0.0, 0.9):
        centre = grid.index(_snap(lr_max_stiff * (1 + beta)))
        first = min(max(centre - 2, 0), len(grid) - 4)
        sweep[str(beta)] = list(grid[first:first + 4])
    return {"relaxation": [{"lr": hi, "momentum": 0.0}, {"lr": lo, "momentum": 0.0},
                           {"lr": lo, "momentum": 0.5}],
            "lr_sweep": sweep, "base_lr": hi}


def predict_two_mode(model: str, measured: dict[str, Any], soft: dict[str, Any]
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Predictions of the two-mode map (theory/two_mode.py) from the measured curvatures.

    Stiff curvature h_s: the top Hessian eigenvalue (the cross-validated one as a second
    source). Soft curvature h_r: the curvature of the mean update direction
    (:func:`.measure.mean_update_curvature`); a relaxation time is predicted only where h_r is
    resolved from zero (h_r > 2 s.e.), else it is undetermined, with the lower bound on tau that
    the upper end h_r + 2 s.e. implies. Returns (items, plan of the runs).
    """
    h_s = measured["spectrum"]["top_eigenvalues"][0]
    h_r, se = soft["curvature"], soft["curvature_se"]
    resolved = h_r > 2 * se
    upper = h_r + 2 * se
    lr_c = measured["critical_lr"]["value"]
    plan = two_mode_plan(lr_c, 2.0 / h_s)
    items: list[dict[str, Any]] = []
    tag = {"runs": "two_mode"}

    def add(quantity: str, setting: dict[str, Any], value: Any, **extra: Any) -> None:
        items.append({"model": model, "quantity": quantity, "setting": {**setting, **tag},
                      "value": value, "source": "two-mode map", **extra})

    curv = {"stiff": h_s, "soft": h_r, "soft_se": se}
    for setting in plan["relaxation"]:
        lr, beta = setting["lr"], setting["momentum"]
        if resolved:
            p = two_mode_prediction(lr=lr, momentum=beta, curvature_stiff=max(h_s, h_r),
                                    curvature_soft=h_r)
            low = two_mode_prediction(lr=lr, momentum=beta, curvature_stiff=max(h_s, upper),
                                      curvature_soft=upper).relaxation_time
            add("relaxation_time", setting, p.relaxation_time, curvatures=curv,
                status="predicted" if p.relaxation_time is not None else "undetermined",
                reason=p.reason, lower_bound=low)
        else:
            bound = (two_mode_prediction(lr=lr, momentum=beta, curvature_stiff=max(h_s, upper),
                                         curvature_soft=upper).relaxation_time
                     if upper > 0 else None)
            add("relaxation_time", setting, None, curvatures=curv, status="undetermined",
                reason=f"soft curvature {h_r:.3g} +- {se:.2g} not resolved from zero",
                lower_bound=bound)
    for beta in (0.0, 0.9):
        add("lr_max", {"momentum": beta}, 2 * (1 + beta) / h_s, curvatures=curv,
            rule="stiff mode's Jury limit (the soft mode is stable there)",
            grid=plan["lr_sweep"][str(beta)])
    base = plan["base_lr"]
    k_s = base * h_s
    k_r = base * h_r if h_r > 0 else base * 1e-9
    first = first_unstable_refresh(momentum=0.0, stiffness_stiff=k_s,
                                   stiffness_soft=min(k_r, k_s))
    refresh = {"value": None, "status": "unstable on-policy"} if first == 1 else {
        "value": (first - 1) if first else None,
        "status": "predicted" if first else "no threshold up to K = 64"}
    add("refresh_max", {"lr": base, "momentum": 0.0, "mode": "hold"}, refresh.pop("value"),
        stiffness=k_s, curvatures=curv,
        rule="first unstable K of the two-mode cycle map = the stiff mode's (lag does not "
        "couple the linear modes)", **refresh)
    for mode, k, note in (("stiff", k_s, ""), ("soft", base * h_r, f"h_r = {h_r:.3g}"),
                          ("soft_upper", base * upper, "h_r + 2 s.e.")):
        if not k > 0:
            add("oscillation_momentum", {"lr": base, "mode": mode}, None, stiffness=k,
                status="undetermined", reason=f"stiffness {k:.3g} <= 0 ({note})")
        elif k >= 1:
            add("oscillation_momentum", {"lr": base, "mode": mode}, 0.0, stiffness=k,
                status="oscillatory or flipping at every momentum (k >= 1)")
        else:
            add("oscillation_momentum", {"lr": base, "mode": mode},
                (1 - math.sqrt(k)) ** 2, stiffness=k, status="predicted",
                period_at_momentum={str(b): _period(b, k) for b in (0.9, 0.95, 0.99)})
    return items, plan


def predict_two_mode_staleness(model: str, measured: dict[str, Any], soft: dict[str, Any],
                               plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Staleness thresholds of the two-mode map at the plan's base lr, momentum 0.

    The lag does not couple the modes, so the threshold is the stiff mode's
    (:func:`grpodyn.numerics.two_mode.staleness_max`). Stiff curvature from three sources, each
    its own quantity: the top Hessian eigenvalue (``staleness_max``), the cross-validated one
    (``staleness_max_cross_validated``) and the critical sharpness 2 / lr_critical
    (``staleness_max_critical``); soft curvature the mean update's (0 when not positive).
    """
    base = plan["base_lr"]
    h_r = soft["curvature"]
    spectrum = measured["spectrum"]
    sources = (("", spectrum["top_eigenvalues"][0], "top Hessian eigenvalue"),
               ("_cross_validated", spectrum["top_cross_validated"],
                "cross-validated top eigenvalue"),
               ("_critical", 2.0 / measured["critical_lr"]["value"],
                "critical sharpness 2 / lr_critical"))
    items = []
    for suffix, h_s, source in sources:
        k_s = base * h_s
        k_r = base * min(h_r, h_s) if h_r > 0 else k_s  # a soft mode of no curvature cannot bind
        value = staleness_max(momentum=0.0, stiffness_stiff=k_s, stiffness_soft=k_r)
        extra = ({"status": "unstable on-policy"} if value is None
                 else {"status": "predicted"})
        items.append({"model": model, "quantity": "staleness_max" + suffix,
                      "setting": {"lr": base, "momentum": 0.0, "runs": "two_mode"},
                      "value": value, "source": f"two-mode map, stiff curvature: {source}",
                      "stiffness": k_s, "curvatures": {"stiff": h_s, "soft": h_r},
                      "rule": "largest stable fixed staleness of the two-mode map = the stiff "
                      "mode's (the lag does not couple the linear modes)", "grid":
                      list(STALENESS_GRID), **extra})
    return items


def _period(momentum: float, stiffness: float) -> float | None:
    """Period [steps] of an oscillatory mode, 2 pi / arg z (None: not oscillatory)."""
    cos = (1 + momentum - stiffness) / (2 * math.sqrt(momentum))
    return 2 * math.pi / math.acos(cos) if abs(cos) < 1 else None
