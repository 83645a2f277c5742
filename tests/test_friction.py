"""What a new user hit first: a negative reward range, a custom reward name, long run names,
long reprs, a missing pandas, the fit table's star and the names of ``dir(grpodyn)``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.cli import main
from grpodyn.empirical.logs.compare import short_names
from grpodyn.empirical.logs.loaders import LogFormatError, load_run
from grpodyn.empirical.logs.run_analysis import analyse_run


def _jsonl(path: Path, key: str, values: np.ndarray, extra: int = 0) -> Path:
    lines = [json.dumps({"step": i + 1, key: float(v), **{f"metric_{j:02d}": 1.0
                                                           for j in range(extra)}})
             for i, v in enumerate(values)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("spelling", [["--reward-range", "-20,20"], ["--reward-range=-20,20"]])
def test_negative_reward_range_parses(tmp_path, capsys, spelling):
    rng = np.random.default_rng(0)
    log = _jsonl(tmp_path / "run.jsonl", "reward", -5 + 3 * rng.standard_normal(40))
    assert main(["fit", str(log), *spelling, "--json"]) == 0
    assert main(["advise", "--log", str(log), *spelling, "--json"]) == 0
    capsys.readouterr()


def test_custom_rollout_reward_mean_is_the_reward(tmp_path):
    run = load_run(_jsonl(tmp_path / "run.jsonl", "rollout_reward_mean", np.linspace(0, 1, 10)))
    assert run.reward_key == "rollout_reward_mean"


def test_hand_written_loop_names(tmp_path):
    """An exported CSV counting ``update``s and a JSONL with ``eval/pass_at_1`` records load
    every metric the diagnosis reads, under the names hand-written loops give them. ``update``
    is not taken for the step unasked (a loop may count something else by it): the error names
    the columns that rise at every row."""
    header = ("update,reward_mean,policy_entropy_mean,zero_advantage_fraction,truncation_rate,"
              "completion_length_mean")
    rows = [f"{i},{0.2 + 0.01 * i},{0.3 - 0.001 * i},0.25,0.0,{100 + i}" for i in range(1, 31)]
    (tmp_path / "metrics.csv").write_text("\n".join([header, *rows]) + "\n")
    with pytest.raises(LogFormatError, match="columns that rise at every row: update, "):
        load_run(tmp_path / "metrics.csv")
    run = load_run(tmp_path / "metrics.csv", step_key="update")
    assert run.steps[0] == 1 and run.reward_key == "reward_mean"
    assert {"entropy", "frac_reward_zero_std", "clipped_share",
            "completion_length"} <= set(run.metrics)
    lines = [json.dumps({"step": i, "mean_reward": 0.4}) for i in range(30)]
    lines += [json.dumps({"step": i, "eval/pass_at_1": 0.3}) for i in (10, 20)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    run = load_run(tmp_path / "metrics.jsonl")
    assert np.isfinite(run.metrics["heldout_reward"]).sum() == 2


def test_no_reward_error_lists_every_metric(tmp_path):
    with pytest.raises(LogFormatError) as info:
        load_run(_jsonl(tmp_path / "run.jsonl", "zz", np.linspace(0, 1, 10), extra=20))
    message = str(info.value)
    assert "metric_19" in message and "zz" in message and "\n" not in message


def test_sweep_names_stay_distinct():
    names = [f"ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
             f"policy_sweep_runs_broad_e2_tb{b}_metrics" for b in (32, 64, 128, 256)]
    shown = short_names(names, width=40)
    assert len(set(shown)) == 4 and all(len(s) <= 40 for s in shown)
    assert all(f"tb{b}" in s for s, b in zip(shown, (32, 64, 128, 256), strict=True))
    assert short_names(["a", "b"]) == ["a", "b"]


def test_compact_reprs(tmp_path):
    rng = np.random.default_rng(1)
    values = 0.8 - 0.6 * np.exp(-np.arange(200) / 40) + 0.02 * rng.standard_normal(200)
    analysis = analyse_run(load_run(_jsonl(tmp_path / "run.jsonl", "reward", values)),
                           train_fraction=0.5)
    assert len(repr(analysis)) < 300 and "RunAnalysis(" in repr(analysis)
    assert len(repr(analysis.forecast)) < 300 and "EnsembleForecast(" in repr(analysis.forecast)
    diagnosis = repr(analysis.diagnosis)
    assert len(diagnosis) < 300 and diagnosis.startswith("Diagnosis('run.jsonl', state=")
    from grpodyn import Monitor

    monitor = Monitor()
    for step, reward in enumerate(values[:30], start=1):
        monitor.update(step, {"reward": reward})
    assert repr(monitor).startswith("Monitor(30 points, last step 30") and len(repr(monitor)) < 200
    import grpodyn

    prediction = repr(grpodyn.predict(lr=0.01, momentum=0.9, kappa=1.0))
    assert len(prediction) < 200 and "regime='oscillatory'" in prediction
    system = grpodyn.MeanFieldMap(lr=0.01, kappa=1.0, optimizer="adam", momentum=0.9, batch=16)
    assert repr(system) == "MeanFieldMap(lr=0.01, kappa=1.0, optimizer='adam', momentum=0.9, " \
        "batch=16)" and eval(repr(system), {"MeanFieldMap": grpodyn.MeanFieldMap}) == system


def test_to_pandas_without_pandas_names_the_install(tmp_path, without_pandas):
    run = load_run(_jsonl(tmp_path / "run.jsonl", "reward", np.linspace(0, 1, 10)))
    with pytest.raises(ImportError, match="pip install pandas"):
        run.to_pandas()


def test_fit_star_marks_the_lowest_aic_with_a_legend(tmp_path, capsys):
    rng = np.random.default_rng(2)
    values = 0.8 - 0.6 * np.exp(-np.arange(150) / 30) + 0.02 * rng.standard_normal(150)
    log = _jsonl(tmp_path / "run.jsonl", "reward", values)
    assert main(["fit", str(log), "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]
    lowest = min(models, key=lambda name: models[name]["aic"])
    assert main(["fit", str(log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("* = lowest AIC") for line in lines)
    starred = [line.split()[1] for line in lines if line.startswith("* ") and "AIC " in line
               and "=" not in line.split()[1]]
    assert starred == [lowest]


def test_dir_shows_only_public_names():
    names = dir(grpodyn)
    for private in ("Any", "annotations", "importlib"):
        assert private not in names
    assert {"load_run", "analyse_run", "advise_log", "__version__"} <= set(names)


@pytest.mark.parametrize("command", [
    ["sweep", "{log}", "{missing}"], ["compare", "{log}", "{missing}"],
    ["transfer", "--from", "{log}", "--from", "{missing}", "--to", "lr=1e-5"],
    ["advise", "--log", "{log}", "--sweep", "{missing}"]])
def test_a_missing_log_among_several_is_named_first(tmp_path, capsys, command):
    """A missing log is named before any other is read (not a missing hyperparameter of the
    first)."""
    log = tmp_path / "run.jsonl"
    log.write_text("".join(f'{{"step": {i}, "reward": {0.1 + 0.01 * i}}}\n' for i in range(20)))
    missing = str(tmp_path / "nope.jsonl")
    argv = [a.format(log=log, missing=missing) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{missing}: no such file or directory" in err
