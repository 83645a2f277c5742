"""The report of one run and the comparison of several say what ``grpodyn diagnose`` says.

A run too short for the modes keeps its state and early warning in the report; a constant
reward is still reported (diagnosed, not fitted) and compared by its state; a refused report
leaves no folder behind; the comparison keeps the state's qualifier; the figure names the
log's own step and metric, keeps its plateau inside the axes, shades only what it says it
shades and names the run of a log of several; a comparison prints in one line and draws
without switching the caller's matplotlib backend.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import Run, load_run


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _warned(tmp_path: Path) -> str:
    """19 points (too few for the modes) whose last step fires the early warning."""
    rows = []
    for s in range(1, 20):
        last = s == 19
        rows.append({"step": s, "reward": round(0.1 + 0.01 * s + 0.01 * ((s * 7) % 5 - 2), 4),
                     "kl": 0.3 if last else 0.01 + 0.001 * ((s * 3) % 4),
                     "completion_length": 100 if last else 400 + 10 * ((s * 5) % 3)})
    return _write(tmp_path / "warned.jsonl", rows)


def _rise(tmp_path: Path, name: str, n: int, *, tau: float = 20.0, noise: float = 0.02,
          seed: int = 0, **extra: float) -> str:
    rng = np.random.default_rng(seed)
    rows = [{"step": s, "reward": float(0.5 * (1 - np.exp(-s / tau)) + noise
                                        * rng.standard_normal()), **extra}
            for s in range(1, n + 1)]
    return _write(tmp_path / name, rows)


def _report(log: str, out: Path, capsys) -> tuple[dict, str, str]:
    assert main(["report", log, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    return (json.loads((out / "summary.json").read_text()),
            (out / "index.html").read_text(), printed)


def test_the_report_of_a_run_too_short_for_the_modes_carries_its_early_warning(tmp_path,
                                                                                capsys):
    log = _warned(tmp_path)
    assert main(["diagnose", log, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["state"] == "too_short" and said["early_warning"]["step"] == 19
    summary, page, printed = _report(log, tmp_path / "out", capsys)
    diagnosis = summary["diagnosis"]
    assert diagnosis is not None
    for key in ("headline", "state", "state_evidence", "early_warning"):
        assert diagnosis[key] == said[key], key
    assert f"Diagnosis: {said['headline']}" in page
    assert "Early warning at step 19" in page and "kl_rise" in page
    assert said["state_evidence"] in page  # why the modes are not judged
    assert "early_warning: at step 19" in printed and "state: too_short: " in printed


def test_compare_and_forecast_give_the_early_warning_as_diagnose_does(tmp_path, capsys):
    """compare gave the bare step (19.0) and forecast dropped the evidence: a script reading
    ``early_warning["step"]`` crashed on one and missed the why on the other."""
    log = _warned(tmp_path)
    assert main(["diagnose", log, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["early_warning"]
    assert main(["compare", log, "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)["runs"][0]["diagnosis"]["early_warning"]
    assert compared == said
    assert main(["compare", log]) == 0
    assert "early warning at step 19" in capsys.readouterr().out
    assert main(["forecast", log, "--horizon", "30", "--json"]) == 0
    forecast = json.loads(capsys.readouterr().out)["early_warning"]
    assert set(forecast) == set(said) == {"step", "signals", "evidence", "remedy"}
    assert forecast["step"] == said["step"] == 19 and forecast["signals"] == said["signals"]


def test_the_report_says_why_a_run_is_not_diagnosed(tmp_path, capsys):
    summary, page, printed = _report(_rise(tmp_path, "eight.jsonl", 8), tmp_path / "out",
                                     capsys)
    assert summary["diagnosis"] is None and "8 logged points" in summary["diagnosis_reason"]
    assert "Diagnosis: not made" in page and summary["diagnosis_reason"] in page
    assert f"diagnosis: not made: {summary['diagnosis_reason']}" in printed


def test_a_constant_reward_is_reported_and_compared_by_its_diagnosis(tmp_path, capsys):
    log = _write(tmp_path / "const.jsonl", [{"step": s, "reward": 0.25} for s in range(1, 41)])
    summary, page, printed = _report(log, tmp_path / "out", capsys)
    assert summary["diagnosis"]["state"] == "not_learning"
    assert "constant" in summary["fit_reason"] and summary["models"] == {}
    assert "No curve is fitted: the reward is constant (0.25)" in page
    assert "not learning" in page and "nan" not in page
    assert (tmp_path / "out" / "reward_forecast.png").stat().st_size > 0
    assert main(["compare", log]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert row.rstrip().endswith("not learning") and "not diagnosed" not in row


def test_a_refused_report_leaves_no_folder_it_made(tmp_path, capsys):
    one = _write(tmp_path / "one.jsonl", [{"step": 1, "reward": 0.5}])
    out = tmp_path / "made" / "deeper"
    assert main(["report", one, "--out", str(out)]) != 0
    assert not (tmp_path / "made").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert main(["report", one, "--out", str(kept)]) != 0
    assert kept.is_dir()  # the user's folder stays
    capsys.readouterr()


def test_compare_keeps_the_qualifier_of_the_state(tmp_path, capsys):
    from grpodyn.empirical.diagnostics.diagnose import diagnose
    from grpodyn.empirical.logs.compare import compare_runs

    log = _rise(tmp_path, "noisy.jsonl", 100, tau=100.0, noise=0.05, seed=1)
    diagnosis = diagnose(load_run(log))
    assert diagnosis.state == "converged" and not diagnosis.resolved
    table = compare_runs([load_run(log)]).to_text()
    assert "converged or still rising, the noise cannot tell which" in table
    assert main(["compare", log]) == 0
    assert "converged or still rising" in capsys.readouterr().out


def test_the_figure_names_the_logs_step_and_metric(tmp_path):
    from grpodyn.empirical.logs.run_analysis import analyse_run

    rows = [{"grpo_step": s, "optimizer_step": 8 * s, "reward": 0.1 + 0.01 * s
             + 0.01 * (s % 3), "approx_kl": 0.01 * (1 + s % 4)} for s in range(1, 31)]
    run = load_run(_write(tmp_path / "grpo.jsonl", rows))
    fig = analyse_run(run).plot()
    axes = fig.axes
    assert "optimizer" not in axes[-1].get_xlabel() and axes[-1].get_xlabel()
    kl = next(ax for ax in axes if "kl" in ax.get_ylabel())
    assert "approx_kl" in kl.get_title() and "reference" not in kl.get_title()


def test_a_plateau_named_in_the_legend_is_inside_the_axes(tmp_path):
    from grpodyn.empirical.logs.run_analysis import analyse_run

    analysis = analyse_run(load_run(_rise(tmp_path, "rise.jsonl", 26, tau=40.0)))
    high = float(np.max(analysis.run.reward)) + 0.5
    forced = replace(analysis, plateau={"value": high, "lower": None, "upper": None,
                                        "status": "determined"}, reward_range=None)
    ax = forced.plot().axes[0]
    low, top = ax.get_ylim()
    assert any(text.get_text().startswith("plateau") for text in ax.get_legend().get_texts())
    assert low < high < top


def test_the_caption_says_shading_only_when_there_is_some(tmp_path, capsys):
    _, page, _ = _report(_rise(tmp_path, "ten.jsonl", 10), tmp_path / "out", capsys)
    assert "shaded" not in page


def test_the_page_names_the_run_of_a_log_of_several(tmp_path, capsys):
    rows = [{"step": s, "reward": 0.1 + 0.01 * s + 0.01 * (s % 3)} for s in range(1, 31)]
    rows += [{"step": s, "reward": 0.2 + 0.01 * (s % 2)} for s in range(1, 21)]
    log = _write(tmp_path / "two.jsonl", rows)
    _, page, _ = _report(log, tmp_path / "out", capsys)
    run = load_run(log).run_name
    assert run
    assert f"<h1>grpodyn report: two.jsonl [{run}]</h1>" in page
    assert f"two.jsonl [{run}]</title>" in page


def _three(tmp_path: Path) -> list[Run]:
    return [load_run(_rise(tmp_path, f"r{i}.jsonl", 40, tau=10.0 * (i + 1), seed=i))
            for i in range(3)]


def test_a_comparison_prints_in_one_short_line(tmp_path):
    from grpodyn.empirical.logs.compare import compare_runs

    comparison = compare_runs(_three(tmp_path))
    text = repr(comparison)
    assert "\n" not in text and len(text) < 400 and "array" not in text
    assert text.startswith("Comparison(3 runs on the step clock")
    assert "array" not in repr(comparison.runs[0]) and len(repr(comparison.runs[0])) < 200


@pytest.mark.parametrize("saved", [False, True])
def test_plotting_a_comparison_keeps_the_callers_backend(tmp_path, saved):
    import matplotlib
    import matplotlib.pyplot as plt

    from grpodyn.empirical.logs.compare import compare_runs

    comparison = compare_runs(_three(tmp_path)[:1])
    before = matplotlib.get_backend()
    try:
        matplotlib.use("svg")
        fig = comparison.plot(path=tmp_path / "c.png" if saved else None)
        assert matplotlib.get_backend() == "svg"
        assert (tmp_path / "c.png").exists() is saved
    finally:
        plt.close("all")
        matplotlib.use(before)
    assert fig.axes


def test_the_comparison_keeps_the_digits_of_a_small_reward(tmp_path, capsys):
    """Three fixed decimals printed a plateau of 0.000487 as "0.000 [0.000, 0.001]", twice
    the interval's width and a run that reads as pinned at zero."""
    log = _rise(tmp_path, "small.jsonl", 80, noise=5e-5)
    rows = [json.loads(line) for line in Path(log).read_text().splitlines()]
    log = _write(tmp_path / "small.jsonl", [{**r, "reward": r["reward"] / 1000} for r in rows])
    assert main(["compare", log, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["runs"][0]
    plateau = summary["plateau"]
    assert plateau["status"] == "determined" and plateau["value"] < 1e-3
    assert main(["compare", log]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert f"{plateau['value']:.4g} [{plateau['lower']:.4g}, {plateau['upper']:.4g}]" in row
    assert f"{summary['final_reward']['value']:.4g}" in row
    assert not any(f"0.000{end}" in row for end in " ,]")  # no value printed as 0.000
