"""Predicted-vs-observed figures of the deep-network demonstration, from the shipped data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .paths import DATA, data_file

__all__ = ["load", "threshold_figure", "spectrum_figure", "reward_figure", "two_mode_lr_figure",
           "two_mode_staleness_figure", "stiff_scan_figure", "stiff_tracking_figure",
           "relaxation_figure"]


def load(name: str, data: Path = DATA) -> dict[str, Any]:
    """Read one JSON file of the study's data (:func:`.paths.data_file`)."""
    return json.loads(data_file(data, name).read_text())


def _predicted(items: list[dict[str, Any]], model: str, quantity: str,
               setting: dict[str, Any]) -> Any:
    return next((i["value"] for i in items if i["model"] == model
                 and i["quantity"] == quantity and i["setting"] == setting), None)


def _labelled(fig: Any, ax: Any, *, xlabel: str, ylabel: str, title: str) -> Any:
    """Label the axes ``ax`` of ``fig`` (axis labels, title, legend), lay it out, return it."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def threshold_figure(model: str, data: Path = DATA) -> Any:
    """Draw the share of unstable seeds on the lr, K and d axes with the predicted thresholds.

    The lr axis at momentum 0 and 0.9; the thresholds from the top Hessian eigenvalue, its
    cross-validated value and the critical sharpness.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    items = load("predictions.json", data)["items"]
    runs = load(f"runs_{model}.json", data)["runs"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    panels = [("lr", "lr", axes[0]), ("refresh", "refresh", axes[1]),
              ("staleness", "staleness", axes[2])]
    for sweep, key, ax in panels:
        for beta in ((0.0, 0.9) if sweep == "lr" else (0.0,)):
            sel = [r for r in runs if r["setting"]["sweep"] == sweep
                   and r["setting"]["momentum"] == beta]
            xs = sorted({r["setting"][key] for r in sel})
            share = [np.mean([r["unstable"] for r in sel if r["setting"][key] == x])
                     for x in xs]
            ax.plot(xs, share, "o-", label=f"observed, momentum {beta}")
            if sweep == "lr":
                for quantity, style in (("lr_max", "--"), ("lr_max_cross_validated", ":"),
                                        ("lr_max_critical", "-.")):
                    value = _predicted(items, model, quantity, {"momentum": beta})
                    if value:
                        ax.axvline(value, ls=style, color="C1" if beta else "C0",
                                   label=f"{quantity} (momentum {beta})")
        if sweep != "lr" and sel:
            setting = {"lr": sel[0]["setting"]["lr"], "momentum": 0.0}
            base = f"{key}_max"
            if sweep == "refresh":
                setting["mode"] = "hold"
            for quantity, style in ((base, "--"), (base + "_critical", "-.")):
                value = _predicted(items, model, quantity, setting)
                if value is not None:
                    ax.axvline(value + 0.5, ls=style, color="C3",
                               label=f"predicted {quantity} + 1/2")
        if sweep == "lr":
            ax.set_xscale("log")
        ax.set_xlabel(key)
        ax.set_ylabel("share of unstable seeds")
        ax.set_title(f"{model}: {sweep} sweep")
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def spectrum_figure(models: list[str], data: Path = DATA) -> Any:
    """Draw the measured curvatures of each model.

    Top Hessian eigenvalues (with standard errors), the cross-validated top curvature, the
    curvature along the update and the critical sharpness 2 / lr_critical.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for j, model in enumerate(models):
        m = load(f"measurements_{model}.json", data)
        s = m["spectrum"]
        tops = s["top_eigenvalues"]
        ax.errorbar([j - 0.2] * len(tops), tops, yerr=s["top_eigenvalues_se"], fmt="o",
                    color="C0", label="top eigenvalues (in-sample)" if j == 0 else None)
        ax.errorbar([j], [s["top_cross_validated"]], yerr=[s["top_cross_validated_se"]],
                    fmt="s", color="C1", label="top, cross-validated" if j == 0 else None)
        ax.errorbar([j + 0.1], [s["curvature_along_update"]],
                    yerr=[s["curvature_along_update_se"]], fmt="^", color="C2",
                    label="along the expected update" if j == 0 else None)
        lr_c = m.get("critical_lr", {}).get("value")
        if lr_c:
            ax.plot([j + 0.2], [2 / lr_c], "D", color="C3",
                    label="critical sharpness 2 / lr_c" if j == 0 else None)
        if (data / f"soft_{model}.json").is_file():
            soft = load(f"soft_{model}.json", data)
            # a log axis cannot show a non-positive value: its 2 s.e. upper end instead
            value = soft["curvature"] if soft["curvature"] > 0 else float("nan")
            ax.errorbar([j + 0.3], [value], yerr=[[min(soft["curvature_se"], 0.99 * value)
                                                   if value == value else 0],
                                                  [soft["curvature_se"]]],
                        fmt="v", color="C4",
                        label="mean update, noise removed (soft mode)" if j == 0 else None)
    ax.set_xticks(range(len(models)), models)
    ax.set_yscale("log")
    ax.set_ylabel("curvature [1 / lr]")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def reward_figure(model: str, data: Path = DATA, momentum: float = 0.0) -> Any:
    """Draw the seed-mean reward curves of the lr sweep, one line per lr."""
    import matplotlib.pyplot as plt

    from grpodyn.empirical.deepnet.grpo import mean_curve

    runs = load(f"runs_{model}.json", data)["runs"]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    lrs = sorted({r["setting"]["lr"] for r in runs if r["setting"]["sweep"] == "lr"})
    for lr in lrs:
        sel = [r["reward"] for r in runs if r["setting"]["sweep"] == "lr"
               and r["setting"]["lr"] == lr and r["setting"]["momentum"] == momentum]
        ax.plot(mean_curve(sel), label=f"lr {lr}")
    return _labelled(fig, ax, xlabel="step", ylabel="batch reward (mean of seeds)",
                     title=f"{model}, momentum {momentum}")


def two_mode_lr_figure(model: str, data: Path = DATA) -> Any:
    """Draw the two-mode lr sweep of ``model`` (share of unstable seeds) and predicted lr_max.

    Solid: the rule fixed before the runs; dotted (when the warm-up accuracy is shipped): the
    post-hoc rule of :func:`.sweeps.is_unstable_post_hoc` (baseline = the warm-up reward).
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from .sweeps import is_unstable_post_hoc, warm_up_accuracy

    items = load("predictions_two_mode.json", data)["items"]
    runs = [r for r in load(f"runs2_{model}.json", data)["runs"] if r["setting"]["sweep"] == "lr"]
    warm = warm_up_accuracy(data, model)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for j, beta in enumerate(sorted({r["setting"]["momentum"] for r in runs})):
        xs = sorted({r["setting"]["lr"] for r in runs if r["setting"]["momentum"] == beta})
        sel = [[r for r in runs if r["setting"]["lr"] == x and r["setting"]["momentum"] == beta]
               for x in xs]
        share = [np.mean([r["unstable"] for r in group]) for group in sel]
        ax.plot(xs, share, "o-", color=f"C{j}", label=f"observed, momentum {beta}")
        if warm is not None:
            late = [np.mean([is_unstable_post_hoc(r, warm) for r in group]) for group in sel]
            ax.plot(xs, late, "x:", color=f"C{j}",
                    label=f"post-hoc rule (warm-up baseline), momentum {beta}")
        value = _predicted(items, model, "lr_max", {"momentum": beta, "runs": "two_mode"})
        if value:
            ax.axvline(value, ls="--", color=f"C{j}", label=f"predicted lr_max ({beta})")
    ax.set_xscale("log")
    return _labelled(fig, ax, xlabel="lr", ylabel="share of unstable seeds",
                     title=f"{model}: lr sweep (two-mode predictions)")


def two_mode_staleness_figure(model: str, data: Path = DATA) -> Any:
    """Draw the run2 staleness sweep of ``model`` (share of unstable seeds) and its predictions.

    Predicted thresholds from ``predictions_staleness.json`` (two-mode map, three stiff
    curvatures), drawn at staleness_max + 1/2 (the boundary between the last stable and the
    first unstable d).
    """
    import matplotlib.pyplot as plt
    import numpy as np

    items = load("predictions_staleness.json", data)["items"]
    runs = [r for r in load(f"runs2_{model}.json", data)["runs"]
            if r["setting"]["sweep"] == "staleness"]
    xs = sorted({r["setting"]["staleness"] for r in runs})
    share = [np.mean([r["unstable"] for r in runs if r["setting"]["staleness"] == d]) for d in xs]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(xs, share, "o-", color="C0", label="observed (share of unstable seeds)")
    for item, style in zip([i for i in items if i["model"] == model], ("--", ":", "-."),
                           strict=False):
        if item["value"] is not None:
            ax.axvline(item["value"] + 0.5, ls=style, color="C3",
                       label=f"predicted {item['quantity']} + 1/2")
    lr = runs[0]["setting"]["lr"] if runs else None
    return _labelled(fig, ax, xlabel="staleness d [steps]", ylabel="share of unstable seeds",
                     title=f"{model}: staleness sweep at lr {lr}, momentum 0")


def stiff_scan_figure(model: str, data: Path = DATA) -> Any:
    """Draw the 1-D scan along the top Hessian eigenvector (``scan_<model>.json``).

    Four panels against the displacement s: the force f(s) = v . g, the curvature v . H v, the
    sampled reward and the share of degenerate groups, each with two standard errors; the
    displacement of one expected step lr |g| is marked.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    scan = load(f"scan_{model}.json", data)
    rows = scan["scan"]
    s = np.array([r["s"] for r in rows])
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.4))
    for ax, key, label in zip(axes, ("force", "curvature", "reward", "degenerate"),
                              ("force v . g", "curvature v . H v [1/lr]", "reward",
                               "degenerate share"), strict=True):
        y = np.array([r[key] for r in rows])
        err = 2 * np.array([r[f"{key}_se"] for r in rows])
        ax.errorbar(s, y, yerr=err, fmt="o-", ms=3, color="C0")
        for x in (-scan["step_length"], scan["step_length"]):
            ax.axvline(x, ls=":", color="0.5")
        ax.set_xscale("symlog", linthresh=scan["step_length"] / 2)
        ax.set_xlabel("displacement s along v")
        ax.set_title(label, fontsize=9)
    fig.suptitle(f"{model}: scan along the top Hessian eigenvector (before training; dotted: "
                 f"one step at lr {scan['lr']})", fontsize=9)
    fig.tight_layout()
    return fig


def stiff_tracking_figure(model: str, lr: float, data: Path = DATA) -> Any:
    """Draw the stiff coordinate u_n of tracked staleness runs and its swing against the relay.

    Left: u_n = v . (theta_n - theta_0) per staleness (one line per seed). Right: the observed
    half swing (max u - min u) / 2 per seed and the relay's (d + 1/2) lr F (the prediction
    when ``predictions_relay.json`` has this lr, else the same rule applied after the runs).
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from .relay import predict_relay

    runs = [r for r in load(f"tracking_{model}_lr{lr:g}.json", data)["runs"]
            if r["setting"]["sweep"] == "staleness"]
    ds = sorted({r["setting"]["staleness"] for r in runs})
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6))
    for j, d in enumerate(ds):
        for k, r in enumerate(x for x in runs if x["setting"]["staleness"] == d):
            u = np.r_[0.0, [p[0] for p in r["projection"]]]
            left.plot(u, color=f"C{j}", lw=0.8, label=f"d = {d}" if k == 0 else None)
            swing = (u.max() - u.min()) / 2
            right.plot(d, swing, "o", color=f"C{j}", ms=4)
    path = data / "predictions_relay.json"
    made = [i for i in (load("predictions_relay.json", data)["items"] if path.is_file() else [])
            if i["model"] == model and i["setting"]["lr"] == lr]
    label = "predicted (committed before the runs)"
    if not made:
        made = predict_relay(model, load(f"scan_{model}.json", data), lr=lr, staleness=tuple(ds))
        label = "relay rule applied after the runs (postdiction)"
    pred = sorted((i["setting"]["staleness"], i["value"]) for i in made
                  if i["quantity"] == "stiff_swing")
    if pred:
        right.plot(*zip(*pred, strict=True), "k--", label=f"(d + 1/2) lr F: {label}")
    left.set_xlabel("step n")
    left.set_ylabel("u_n = v . (theta_n - theta_0)")
    left.legend(fontsize=7, ncol=2)
    right.set_xlabel("staleness d")
    right.set_ylabel("half swing of u")
    right.legend(fontsize=7)
    fig.suptitle(f"{model}: the stiff coordinate under staleness, lr {lr}, momentum 0",
                 fontsize=9)
    fig.tight_layout()
    return fig


def relaxation_figure(model: str, data: Path = DATA, route: str = "state") -> Any:
    """Draw the measured finite-step drift and the predicted against the observed reward curves.

    Left: D_lr(r) per step at the copy states (``drift_<model>.json``, +- s.e.) and the quadratic
    of ``predictions_relaxation.json``. Right: the mean-field curve of each lr (dashed, committed
    before the runs) and the seed-mean reward of the runs (``relaxruns_<model>.json``, solid).
    ``route="slow"`` draws the slow route of findings 10f from the ``_slow`` files instead: the
    segments' drift at the states and the slow drift at zero deviation fitted through them;
    ``route="burnin"`` the ``_burnin`` files of findings 10g (the segments read after a burn-in,
    the predicted curve through the measured burn-in of the warmed model); ``route="linear"``
    the ``_linear`` files of findings 10h (the linear drift of :mod:`.linear`); ``route="long"``
    the ``_long`` files of findings 10i (its 600-step variant); ``route="precise"`` the
    ``_precise`` files of findings 10j (the 600-step variant with 96 repeats per state).
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from grpodyn.empirical.deepnet.grpo import mean_curve

    from .relaxation import route_curve, route_suffix

    tag = route_suffix(route)
    measured = load(f"drift{tag}_{model}.json", data)
    made = [i for i in load(f"predictions_relaxation{tag}.json", data)["items"]
            if i["model"] == model and i["quantity"] == "relaxation_time"]
    path = data / f"relaxruns{tag}_{model}.json"
    runs = load(path.name, data)["runs"] if path.is_file() else []
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6))
    for j, item in enumerate(sorted(made, key=lambda i: i["setting"]["lr"])):
        lr, steps = item["setting"]["lr"], item["setting"]["steps"]
        points = measured["drift"][str(lr)]
        r = np.array([p["reward_mid"] for p in points])
        left.errorbar(r, [p["drift"] for p in points], [p["drift_se"] for p in points],
                      fmt="o", color=f"C{j}", ms=3, label=f"lr {lr:g}: measured")
        a, b, c = item["drift_fit"]["coef"]
        grid = np.linspace(r.min(), r.max(), 50)
        left.plot(grid, a + b * grid + c * grid ** 2, color=f"C{j}", lw=1)
        predicted = route_curve(item["drift_fit"]["coef"], item["start_reward"],
                                item.get("burned_reward"), item.get("burn_in", 0), steps)
        right.plot(predicted, "--", color=f"C{j}",
                   label=f"lr {lr:g}: predicted, tau {item['value']:.0f}"
                   if item["value"] is not None else f"lr {lr:g}: predicted")
        mine = [x["reward"] for x in runs if x["setting"]["lr"] == lr]
        if mine:
            curve = mean_curve(mine)
            smooth = np.convolve(curve, np.ones(10) / 10, mode="valid")
            right.plot(np.arange(smooth.size) + 4.5, smooth, color=f"C{j}",
                       label=f"lr {lr:g}: observed (seed mean, 10-step average)")
    left.axhline(0.0, color="grey", lw=0.5)
    left.set_xlabel("reward r (segment mid)")
    left.set_ylabel("drift per step D_lr(r)")
    left.legend(fontsize=7)
    right.set_xlabel("step n")
    right.set_ylabel("reward")
    right.legend(fontsize=7)
    what = {"state": "finite-step drift", "slow": "slow drift (fluctuation regressed out)",
            "burnin": "drift after a 20-step burn-in at the lr",
            "linear": "linear drift after a 20-step burn-in at the lr (3 states, 60-step "
            "segments)",
            "long": "linear drift after a 20-step burn-in at the lr (states 0/300/600 of a "
            "600-step copy run, 60-step segments)",
            "precise": "linear drift after a 20-step burn-in at the lr (states 0/300/600 of a "
            "600-step copy run, 60-step segments, 96 repeats)"}[route]
    fig.suptitle(f"{model}: {what} across r (measured before the runs) and the relaxation it "
                 "predicts", fontsize=9)
    fig.tight_layout()
    return fig
