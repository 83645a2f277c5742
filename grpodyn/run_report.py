"""``grpodyn report LOG``: the fit, forecast, regime, stability margins and diagnosis of one run.

Writes ``index.html``, ``summary.json`` and two figures to the output directory (atomically,
never over the log itself).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.numerics.files import write_atomic
from grpodyn.serialization import finite_json

__all__ = ["write_run_report", "run_summary"]


def run_summary(run, *, momentum: float = 0.9, group_size: int | None = None, law=None
                ) -> dict[str, Any]:
    """Fit, forecast, regime, stability margins and diagnosis of a loaded run (a dict).

    ``law``: the exponential fit of the run, when the caller already has it.
    """
    from grpodyn.analysis import fit_run
    from grpodyn.empirical.diagnostics import diagnose
    from grpodyn.numerics.compiled import compiled
    from grpodyn.numerics.fit import fit_curve
    from grpodyn.numerics.stability import first_unstable_refresh, regime, staleness_max

    fits = fit_run(run, momentum=momentum, train_fraction=0.7 if run.n_points >= 30 else 1.0)
    if law is None:
        law = fit_curve("exponential", run.steps, run.reward)
    tau, r_star = law.params["tau"], law.params["r_star"]
    stiffness = (1.0 - momentum) / tau  # overdamped map: tau = c / k
    k_max = float(compiled("stiffness_max")(momentum))
    first_refresh = first_unstable_refresh(momentum=momentum, stiffness=stiffness)
    dynamics = {
        "momentum": momentum, "tau": tau, "tau_stderr": law.stderr["tau"], "plateau": r_star,
        "plateau_stderr": law.stderr["r_star"],
        "steps_to_plateau": max(0.0, float(run.steps[0] + tau * np.log(20) - run.steps[-1])),
        "stiffness": stiffness, "regime": regime(momentum=momentum, stiffness=stiffness),
        "stability_margin": 1.0 - stiffness / k_max,
        "refresh_max": None if first_refresh is None else first_refresh - 1,
        "staleness_max": staleness_max(momentum=momentum, stiffness=stiffness)}
    diagnosis = diagnose(run, group_size=group_size).to_dict() if run.n_points >= 20 else None
    return finite_json({"fit": fits, "dynamics": dynamics, "diagnosis": diagnosis})


def _figures(run, law, out: Path) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    horizon = run.steps[-1] + 0.5 * (run.steps[-1] - run.steps[0])
    t = np.linspace(run.steps[0], horizon, 400)
    low, high = law.prediction_band(t)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(run.steps, run.reward, ".", ms=3, alpha=0.5, label="logged reward")
    ax.plot(t, law.predict(t), "C1", label=f"fitted law (tau {law.params['tau']:.0f} steps)")
    ax.fill_between(t, low, high, color="C1", alpha=0.2, label="95% band")
    ax.axvline(run.steps[-1], color="grey", lw=0.8, ls=":")
    ax.axhline(law.params["r_star"], color="C2", lw=0.8, ls="--", label="forecast plateau")
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.legend(fontsize=7)
    fig.savefig(out / "reward_forecast.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    figures = [("reward_forecast.png", "Reward, fitted law and forecast beyond the last step.")]
    signals = [(name, run.metrics[name]) for name in ("entropy", "frac_reward_zero_std",
                                                      "kl", "heldout_reward")
               if name in run.metrics]
    if signals:
        fig, axes = plt.subplots(len(signals), 1, figsize=(6.5, 1.8 * len(signals)),
                                 sharex=True, squeeze=False)
        for ax, (name, values) in zip(axes[:, 0], signals, strict=True):
            finite = np.isfinite(values)
            ax.plot(run.steps[finite], values[finite], lw=0.8)
            ax.set_ylabel(name, fontsize=7)
        axes[-1, 0].set_xlabel("step")
        fig.savefig(out / "diagnostic_signals.png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        figures.append(("diagnostic_signals.png", "The metrics the diagnosis reads."))
    return figures


def write_run_report(log: str | Path, out: Path, *, momentum: float = 0.9,
                     group_size: int | None = None,
                     progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Report on one training log in ``out``; returns the summary (also summary.json)."""
    from grpodyn.empirical.loaders import load_run

    say = progress or (lambda message: None)
    say(f"loading {log}")
    run = load_run(log)
    out.mkdir(parents=True, exist_ok=True)
    if Path(log).resolve().parent == out.resolve():
        say("writing beside the log (the log itself is never touched)")
    say("fitting, forecasting and diagnosing")
    from grpodyn.numerics.fit import fit_curve

    law = fit_curve("exponential", run.steps, run.reward)
    summary = run_summary(run, momentum=momentum, group_size=group_size, law=law)
    say("drawing figures")
    figures = _figures(run, law, out)
    dyn = summary["dynamics"]
    fit = summary["fit"]
    model_rows = "\n".join(
        f"<tr><td>{name}</td><td>{m['r2']:.3f}</td><td>{m['aic']:.1f}</td><td>"
        + html.escape(", ".join(f"{k}={v:.4g}" for k, v in m["params"].items() if v is not None))
        + "</td></tr>" for name, m in fit["models"].items())
    diagnosis = summary["diagnosis"]
    diag_rows = "" if diagnosis is None else "\n".join(
        f"<tr><td>{name}</td><td>{'FLAGGED' if v['flag'] else ('-' if v['judged'] else 'n/a')}"
        f"</td><td>{v['score']:.2f}</td><td>{html.escape(v['evidence'])}</td></tr>"
        for name, v in diagnosis["modes"].items())
    images = "\n".join(f'<figure><img src="{name}" alt="{html.escape(caption)}">'
                       f"<figcaption>{html.escape(caption)}</figcaption></figure>"
                       for name, caption in figures)
    notes = "".join(f"<li>{html.escape(w)}</li>" for w in fit["warnings"])
    primary = "n/a" if diagnosis is None else (diagnosis["primary"] or "healthy (none flagged)")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>grpodyn: {html.escape(run.source)}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px;font-size:13px}}
figure{{display:inline-block;margin:1em}}img{{max-width:520px}}</style></head><body>
<h1>grpodyn report: {html.escape(Path(run.source).name)}</h1>
<p>{run.n_points} points ({html.escape(run.format)}, reward = {html.escape(run.reward_key)}).
Noise ceiling of R^2: {fit['noise']['r2_ceiling']:.3f}.</p><ul>{notes}</ul>
<h2>Forecast and dynamics (momentum {dyn['momentum']:g})</h2>
<table>
<tr><td>plateau r*</td><td>{dyn['plateau']:.4g} +- {dyn['plateau_stderr'] or 0:.2g}</td></tr>
<tr><td>relaxation time tau</td><td>{dyn['tau']:.4g} +- {dyn['tau_stderr'] or 0:.2g} steps
</td></tr>
<tr><td>steps to plateau (95% of the gain)</td><td>{dyn['steps_to_plateau']:.0f}</td></tr>
<tr><td>regime</td><td>{dyn['regime']}</td></tr>
<tr><td>stability margin 1 - k/k_max</td><td>{dyn['stability_margin']:.4f}</td></tr>
<tr><td>largest stable refresh interval / staleness</td><td>{dyn['refresh_max']} /
{dyn['staleness_max']}</td></tr></table>
<h2>Fits</h2><table><tr><th>model</th><th>R^2</th><th>AIC</th><th>parameters</th></tr>
{model_rows}</table>
<h2>Diagnosis: {html.escape(primary)}</h2>
<table><tr><th>mode</th><th>verdict</th><th>score</th><th>evidence</th></tr>{diag_rows}</table>
<h2>Figures</h2>{images}
</body></html>
"""
    write_atomic(out / "index.html", page)
    result = {"html": str(out / "index.html"), "source": run.source, **summary,
              "figures": [str(out / name) for name, _ in figures]}
    write_atomic(out / "summary.json", json.dumps(finite_json(result), indent=2,
                                                   allow_nan=False))
    return result
