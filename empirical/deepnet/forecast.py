"""Predictions from the measured constants with the project's numerics (THEORY.md 3-5).

Only :func:`_theory` calls the project's prediction engine (keyword arguments, one place to adapt
when its parameter names change). Stiffness conventions (see :mod:`.measure`): the stability
thresholds use the stiff curvature h_max of the parameter map (k = lr h_max); the relaxation time
of the reward uses kappa, the slope of the drift (THEORY.md's definition), tau = c / (lr kappa).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["LR_GRID", "REFRESH_GRID", "STALENESS_GRID", "MOMENTUM_GRID", "predict_model",
           "plan_settings"]

LR_GRID = (0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
REFRESH_GRID = (1, 2, 3, 4, 6, 8, 12, 16)
STALENESS_GRID = (0, 1, 2, 3, 4, 6, 8)
MOMENTUM_GRID = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def _theory(*, lr: float, momentum: float, curvature: float, refresh: int = 1) -> Any:
    """Return the project's prediction for heavy-ball SGD at ``lr`` with curvature ``curvature``."""
    from grpodyn.numerics.predict import predict

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
    """Prediction items of one model size from its measurements (see the issue's format)."""
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
        # oscillatory when k > (1 - sqrt(momentum))^2 (THEORY.md section 4)
        if not k > 0:
            add("oscillation_momentum", {"lr": base, "mode": label}, None,
                status="undetermined", reason="measured curvature <= 0")
            continue
        value = (1.0 - math.sqrt(k)) ** 2 if k < 1 else 0.0
        add("oscillation_momentum", {"lr": base, "mode": label}, value, stiffness=k,
            rule="oscillatory for momentum > (1 - sqrt(lr * curvature))^2")
    return items
