"""Predict and observe the stiff coordinate's swing under staleness: the delayed relay.

The 1-D scan along the top Hessian eigenvector (``scan_<size>.json``, :mod:`.stiff`) shows a
restoring force that saturates beyond about one step's length. With a force of bounded size F
and staleness d the coordinate u = v . (theta_n - theta_0) swings in a limit cycle of half
peak-to-peak (d + 1/2) lr F and period 2 (2 d + 1) (``theory/relay.py``), instead of growing
geometrically as the linear map says. Rules fixed before the runs they predict:

- F (``saturated_force``): the median over the scan's displacements |s| >= lr |g| (one expected
  step or more) of the restoring force -sign(s) f(s);
- ``stiff_swing`` at staleness d: (d + 1/2) lr F, judged against the seed median of
  (max_n u_n - min_n u_n) / 2 over the run (u_0 = 0), within 25 %;
- ``staleness_max`` (relay + scan): d is predicted unstable when the scan's reward loss at the
  displacement (d + 1/2) lr F (mean of both signs, linear in |s| between scan points) exceeds
  the judging rule's margin ``LOSS_MARGIN``; judged by the fixed rule of :mod:`.sweeps`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .forecast import STALENESS_GRID
from .sweeps import LOSS_MARGIN, grid_threshold, is_unstable, lower_bound_status

__all__ = ["saturated_force", "reward_loss_at", "predict_relay", "observe_tracking",
           "observe_tracked_refresh", "load_tracking", "relay_rows"]


def saturated_force(rows: list[dict[str, float]], *, step: float) -> float:
    """Median restoring force -sign(s) f(s) over scan rows with |s| >= ``step``."""
    forces = [-np.sign(r["s"]) * r["force"] for r in rows
              if abs(r["s"]) >= step * (1 - 1e-9) and r["s"] != 0.0]
    if not forces:
        raise ValueError(f"the scan has no displacement of at least one step ({step:.3g})")
    return float(np.median(forces))


def reward_loss_at(rows: list[dict[str, float]], amplitude: float) -> float:
    """Reward at s = 0 minus the scan's reward at +-``amplitude`` (mean of the two signs).

    Linear interpolation in |s| on each side; beyond the scan's last point, that point's value.
    """
    zero = next(r["reward"] for r in rows if r["s"] == 0.0)
    losses = []
    for sign in (1.0, -1.0):
        side = sorted([(0.0, zero)] + [(abs(r["s"]), r["reward"]) for r in rows
                                       if r["s"] * sign > 0])
        xs, ys = zip(*side, strict=True)
        losses.append(zero - float(np.interp(amplitude, xs, ys)))
    return float(np.mean(losses))


def predict_relay(model: str, scan: dict[str, Any], *, lr: float,
                  staleness: tuple[int, ...] = STALENESS_GRID) -> list[dict[str, Any]]:
    """Relay predictions at ``lr`` (momentum 0) from a scan, and the linear map's for contrast.

    Items: ``stiff_swing`` for each d >= 1 of ``staleness``; ``staleness_max`` by the relay
    and scan rule; ``staleness_max_linear`` and ``staleness_max_linear_cross_validated`` (the
    one-mode linear map with the scan's top eigenvalue, in-sample and cross-validated).
    """
    from grpodyn.numerics import _generated as gen
    from grpodyn.numerics.stability import staleness_max

    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr}")
    rows = scan["scan"]
    step = lr * scan["directions"]["update_norm"]
    force = saturated_force(rows, step=step)
    setting = {"lr": lr, "momentum": 0.0, "runs": "tracked"}
    base = {"model": model, "force_saturated": force, "step_length": step}
    items = []
    flags = []
    for d in staleness:
        swing = float(gen.relay_half_swing(d, lr, force))
        loss = reward_loss_at(rows, swing)
        flags.append(loss > LOSS_MARGIN)
        if d >= 1:
            items.append({**base, "quantity": "stiff_swing",
                          "setting": {**setting, "staleness": d}, "value": swing,
                          "period": float(gen.relay_period(d)), "reward_loss_at_swing": loss,
                          "source": "delayed relay (theory/relay.py), F from the scan",
                          "rule": "(d + 1/2) lr F; observed: seed median of (max u - min u) / "
                          "2, within 25 %"})
    grid = list(staleness)
    relay_max = grid_threshold(grid, flags)
    items.append({**base, "quantity": "staleness_max", "setting": setting, "value": relay_max,
                  "grid": grid, "reward_loss_at_swing": dict(zip(map(str, grid), [
                      reward_loss_at(rows, float(gen.relay_half_swing(d, lr, force)))
                      for d in grid], strict=True)),
                  "source": "delayed relay + scan: d unstable when the scan's reward loss at "
                  "the relay swing exceeds the margin",
                  **({"status": "unstable on-policy"} if relay_max is None else {})})
    for suffix, h in (("", scan["directions"]["eigenvalues"][0]),
                      ("_cross_validated", scan["directions"]["cross_validated"][0])):
        value = staleness_max(momentum=0.0, stiffness=lr * h)
        items.append({**base, "quantity": "staleness_max_linear" + suffix, "setting": setting,
                      "value": value, "stiffness": lr * h, "grid": grid,
                      "source": "one-mode linear map, top eigenvalue of the scan's sample",
                      **({"status": "unstable on-policy"} if value is None else {})})
    return items


def _seeds_and_steps(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Collect the seeds (sorted) and run lengths of ``records`` (one length, or a list)."""
    steps = sorted({len(r["reward"]) for r in records})
    return {"seeds": sorted({r["seed"] for r in records if "seed" in r}),
            "steps": steps[0] if len(steps) == 1 else steps}


def observe_tracked_refresh(model: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``refresh_max`` (sample-and-hold) of tracked runs, by the fixed rule of :mod:`.sweeps`.

    The on-policy runs (staleness 0) are the grid's K = 1. The setting names the seeds and the
    run length, so that the item never joins a prediction made for other runs (the tracked
    runs were observations, no prediction was committed for them).
    """
    by_lr: dict[float, dict[int, list[dict[str, Any]]]] = {}
    for rec in records:
        s = rec["setting"]
        if s["sweep"] == "refresh" and s.get("mode", "hold") == "hold":
            by_lr.setdefault(s["lr"], {}).setdefault(s["refresh"], []).append(rec)
    for rec in records:
        s = rec["setting"]
        if s["sweep"] == "staleness" and s["staleness"] == 0 and s["lr"] in by_lr:
            by_lr[s["lr"]].setdefault(1, []).append(rec)
    items = []
    for lr, groups in sorted(by_lr.items()):
        grid = sorted(groups)
        flags = [sum(is_unstable(r) for r in groups[k]) >= 2 for k in grid]
        runs = [r for k in grid for r in groups[k]]
        setting = {"lr": lr, "momentum": 0.0, "mode": "hold", "runs": "tracked",
                   **_seeds_and_steps(runs)}
        items.append({"model": model, "quantity": "refresh_max", "setting": setting,
                      "value": grid_threshold(grid, flags), "grid": grid, "unstable": flags,
                      "unstable_seeds": [sum(is_unstable(r) for r in groups[k]) for k in grid],
                      **lower_bound_status(flags)})
    return items


def observe_tracking(model: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Observation items of tracked runs: swings, staleness and refresh thresholds (fixed rule).

    The staleness items keep the setting the relay predictions use (``seeds`` and ``steps`` are
    fields beside it); the refresh items are :func:`observe_tracked_refresh`'s.
    """
    by_lr: dict[float, dict[int, list[dict[str, Any]]]] = {}
    for rec in records:
        s = rec["setting"]
        if s["sweep"] == "staleness":
            by_lr.setdefault(s["lr"], {}).setdefault(s["staleness"], []).append(rec)
    items = []
    for lr, groups in sorted(by_lr.items()):
        setting = {"lr": lr, "momentum": 0.0, "runs": "tracked"}
        grid = sorted(groups)
        for d in grid:
            swings = []
            for rec in groups[d]:
                u = np.r_[0.0, [p[0] for p in rec["projection"]]]
                swings.append(float((u.max() - u.min()) / 2))
            items.append({"model": model, "quantity": "stiff_swing",
                          "setting": {**setting, "staleness": d},
                          "value": float(np.median(swings)), "seeds": swings})
        flags = [sum(is_unstable(r) for r in groups[d]) >= 2 for d in grid]
        items.append({"model": model, "quantity": "staleness_max", "setting": setting,
                      "value": grid_threshold(grid, flags), "grid": grid, "unstable": flags,
                      **_seeds_and_steps([r for d in grid for r in groups[d]]),
                      **lower_bound_status(flags)})
    return items + observe_tracked_refresh(model, records)


def load_tracking(paths: list[Any]) -> list[dict[str, Any]]:
    """Observation items of every tracking file."""
    items = []
    for path in paths:
        data = json.loads(path.read_text())
        items.extend(observe_tracking(data["size"], data["runs"]))
    return items


def relay_rows(out: Any) -> list[dict[str, Any]]:
    """Comparison rows of the relay: predictions (committed) and postdictions, both labelled.

    Predictions come from ``predictions_relay.json`` (with its commit). Every tracked lr that
    has no prediction is compared with the rules applied now to the same scan, labelled
    ``postdiction`` (the lr 0.1 tracking that suggested the relay: not a test).
    """
    from .sweeps import join

    observed = load_tracking(sorted(out.glob("tracking_*.json")))
    path = out / "predictions_relay.json"
    made = json.loads(path.read_text()) if path.is_file() else {"items": [], "commit": None}
    predicted = [{**i, "commit": made["commit"]} for i in made["items"]]
    rows = join(predicted, observed)
    covered = {(i["model"], i["setting"]["lr"]) for i in predicted}
    for model, lr in sorted({(o["model"], o["setting"]["lr"]) for o in observed} - covered):
        scan_path = out / f"scan_{model}.json"
        if not scan_path.is_file():
            continue
        grid = tuple(sorted({o["setting"]["staleness"] for o in observed
                             if o["model"] == model and o["setting"]["lr"] == lr
                             and o["quantity"] == "stiff_swing"}))
        post = predict_relay(model, json.loads(scan_path.read_text()), lr=lr, staleness=grid)
        for row in join(post, observed):
            row["postdiction"] = ("rules applied after these runs (they suggested the relay): "
                                  "not a test")
            rows.append(row)
    return rows
