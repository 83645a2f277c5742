"""What a new user types: options that were accepted and then ignored or silently replaced,
errors that did not name the log, and output lines that contradicted themselves.

Each case runs the command line on a small seeded log written to ``tmp_path``.
"""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.numerics.forecast import forecast_curve

REAL = Path(__file__).parent / "data" / "real_logs"


def _write(path, values, *, steps=None):
    steps = range(1, len(values) + 1) if steps is None else steps
    path.write_text("".join(json.dumps({"step": s, "reward": v}) + "\n"
                            for s, v in zip(steps, values, strict=True)))
    return str(path)


def _rise(n=60, tau=4.0, seed=0):
    """A fast exponential rise in [0, 1] with noise: tau well below its run's goal."""
    rng = random.Random(seed)
    return [0.2 + 0.6 * (1 - math.exp(-i / tau)) + rng.gauss(0, 0.02) for i in range(1, n + 1)]


@pytest.fixture()
def log(tmp_path):
    return _write(tmp_path / "rise.jsonl", _rise())


def _error(argv, capsys):
    """Run ``argv`` with and without --json: exit 2, one stderr line, nothing on stdout."""
    lines = []
    for extra in ([], ["--json"]):
        assert main([*argv, *extra]) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        lines.append(err.strip())
    return lines[0]


BAD_OPTIONS = [
    # --lr was read as a plain number: -1 and 0 were taken, then dropped for the logged lr
    (["advise", "--log", "LOG", "--lr", "-1"], "--lr"),
    (["advise", "--log", "LOG", "--lr", "0"], "--lr"),
    # the lag options were ignored with --log
    (["advise", "--log", "LOG", "--refresh", "4"], "--refresh"),
    (["advise", "--log", "LOG", "--staleness", "2"], "--staleness"),
    # --refresh 0 became refresh 1 (``or 1``)
    (["advise", "--kappa", "1", "--refresh", "0"], "--refresh"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--refresh", "0"],
     "--refresh"),
    # a momentum outside [0, 1) passed where the command does not use it
    (["diagnose", "LOG", "--momentum", "3"], "--momentum"),
    (["compare", "LOG", "--momentum", "1"], "--momentum"),
    # the range of a train fraction or a band level did not name its option
    (["forecast", "LOG", "--train-fraction", "1.5"], "--train-fraction"),
    (["forecast", "LOG", "--train-fraction", "0.5", "--level", "2"], "--level"),
    # fit and forecast read a train fraction by one rule, in (0, 1]; forecast's 1 scores nothing
    (["fit", "LOG", "--train-fraction", "1.5"], "--train-fraction: not in (0, 1]"),
    (["forecast", "LOG", "--train-fraction", "0"], "--train-fraction: not in (0, 1]"),
    (["forecast", "LOG", "--train-fraction", "1"], "leaves no points to score"),
]


@pytest.mark.parametrize("argv,needle", BAD_OPTIONS, ids=[" ".join(a[:1] + a[-2:])
                                                          for a, _ in BAD_OPTIONS])
def test_bad_options_are_refused_not_ignored(argv, needle, log, capsys):
    line = _error([log if a == "LOG" else a for a in argv], capsys)
    assert needle in line


def test_advice_on_too_few_points_names_the_log(tmp_path, capsys):
    path = _write(tmp_path / "two_points.jsonl", [0.1, 0.2])
    line = _error(["advise", "--log", path], capsys)
    assert path in line and "at least 3" in line


def test_forecast_without_a_cut_names_the_log_and_the_choices(log, capsys):
    line = _error(["forecast", log], capsys)
    assert log in line and "--horizon" in line and "--train-fraction" in line


@pytest.mark.parametrize("argv,needle", [
    (["--horizon", "0"], "horizon 0 is not after step 60, the last step fitted"),
    (["--horizon", "-5"], "horizon -5 is not after step 60"),
    (["--horizon", "60.5"], "horizon 60.5 leaves no step after step 60"),
    (["--until", "99999"], "until 99999 (until= / --until) is past the log's last step 60"),
    (["--until", "1"], "the cut leaves 1 training point; a forecast needs 8")])
def test_a_horizon_or_cut_with_nothing_to_forecast_says_which(argv, needle, log, capsys):
    """Without a cut the error spoke of "the cut at step 60"; a horizon given was told to give
    --horizon."""
    line = _error(["forecast", log, *argv], capsys)
    assert log in line and needle in line


def test_a_short_run_without_a_cut_speaks_of_the_run(tmp_path, capsys):
    """A 3-point run with --horizon alone: no cut was given, so none is named."""
    path = _write(tmp_path / "short.jsonl", [0.1, 0.2, 0.3])
    line = _error(["forecast", path, "--horizon", "10"], capsys)
    assert line.endswith("short.jsonl: the run has 3 training points; a forecast needs 8")


def test_a_reward_constant_before_the_cut_names_the_log(tmp_path, capsys):
    """josephdutoit's log sits at -1 for its first 20 steps: the error named no log."""
    path = _write(tmp_path / "pinned.jsonl", [-1.0] * 20 + _rise(20))
    line = _error(["forecast", path, "--until", "20"], capsys)
    assert line.startswith(f"grpodyn: error: {path}: ") and "constant" in line


def test_a_horizon_far_past_the_log_is_refused_at_once(log, capsys, monkeypatch):
    """--horizon 1e9 built a billion-point grid and was killed for memory; a cap refuses it.

    The cap is lowered here so that a regression fails this test instead of exhausting memory.
    """
    from grpodyn.empirical.logs import run_analysis

    assert run_analysis.MAX_FORECAST_POINTS <= 1_000_000
    monkeypatch.setattr(run_analysis, "MAX_FORECAST_POINTS", 1_000)
    start = time.perf_counter()
    line = _error(["forecast", log, "--horizon", "5000"], capsys)
    assert time.perf_counter() - start < 10
    assert log in line and "horizon 5000" in line and "1,000" in line
    assert main(["forecast", log, "--horizon", "500", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"][-1] == 500


def test_keep_says_why_its_interval_lies_below_the_runs_lr(log, capsys):
    assert main(["advise", "--log", log, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rec, (_, hi) = result["recommendation"], result["interval"]["lr_ratio"]
    assert rec["direction"] == "keep" and hi is not None and hi < rec["lr_ratio"]
    # the JSON said "multiples of the run's lr the evidence allows" of an interval without x1
    assert "the least lr that still reaches the goal" in result["interval"]["meaning"]
    assert "the evidence allows" not in result["interval"]["meaning"]
    assert main(["advise", "--log", log]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines[1:])  # wrapped, the path's line apart
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("interval:"))
    interval = " ".join([lines[at], *(x.strip() for x in lines[at + 1:at + 3]
                                      if x.startswith("      "))])
    assert "the least lr that still reaches the goal" in interval


def test_a_slow_mode_without_a_ceiling_prints_no_inf(tmp_path, capsys):
    rng = random.Random(0)
    values = [-1 + 0.5 * (1 - math.exp(-i / 10)) + 0.001 * i + rng.gauss(0, 0.02)
              for i in range(1, 241)]
    path = _write(tmp_path / "two_timescales.jsonl", values)
    assert main(["advise", "--log", path, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["basis"]["kind"] == "slow_mode" and result["basis"]["tau"]["upper"] is None
    assert "inf" not in result["basis"]["text"] and "open]" in result["basis"]["text"]


def test_diagnose_and_forecast_name_the_run_they_read(tmp_path, capsys):
    short, long = _rise(20, seed=1), _rise(60, seed=2)
    path = _write(tmp_path / "appended.jsonl", short + long,
                  steps=[*range(1, 21), *range(1, 61)])
    assert main(["diagnose", path, "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)["run"]
    assert chosen
    assert main(["diagnose", path]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"{path} [{chosen}]: ")
    assert main(["forecast", path, "--train-fraction", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == chosen
    assert main(["fit", path]) == 0  # its header named the log alone
    assert capsys.readouterr().out.splitlines()[0].startswith(f"{path} [{chosen}] (")
    assert main(["diagnose", _write(tmp_path / "one.jsonl", _rise()), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] is None


def test_the_terminal_says_plateau_not_r_star(log, capsys):
    assert main(["fit", log]) == 0
    out = capsys.readouterr().out
    assert "plateau=" in out and "r_star" not in out
    runs = [["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--r0", "0.2",
             option, "0.8", "--steps", "20", "--json"] for option in ("--plateau", "--r-star")]
    trajectories = []
    for argv in runs:
        assert main(argv) == 0
        trajectories.append(json.loads(capsys.readouterr().out)["trajectory"])
    assert trajectories[0] == trajectories[1] and trajectories[0][-1] > 0.5


def test_a_reward_range_the_log_leaves_names_the_log_and_its_span(log, capsys):
    line = _error(["advise", "--log", log, "--reward-range", "0.5,0.6"], capsys)
    assert log in line and "lie outside it" in line and " of 60 logged rewards" in line


def test_an_unknown_reward_key_lists_every_metric(tmp_path, capsys):
    names = [f"metric_{i:02d}" for i in range(30)]
    path = tmp_path / "wide.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": 0.1 * s, **dict.fromkeys(names, 1.0)})
                            + "\n" for s in range(1, 11)))
    line = _error(["runs", str(path), "--reward-key", "nosuch"], capsys)
    assert "(32)" in line and all(name in line for name in names)


def test_a_reward_key_given_by_the_name_runs_shows_points_to_the_logs_own(tmp_path, capsys):
    """`grpodyn runs` shows "heldout_reward <- eval/reward"; --reward-key heldout_reward was
    answered with the 5 metric names and no word on which one was meant."""
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": 0.1 * s, "eval/reward": 0.2})
                            + "\n" for s in range(1, 11)))
    line = _error(["forecast", str(path), "--train-fraction", "0.5", "--reward-key",
                   "heldout_reward"], capsys)
    assert "grpodyn's name for 'eval/reward'" in line and "--reward-key eval/reward" in line


def test_the_repr_of_a_run_is_compact(tmp_path):
    from grpodyn import load_run

    run = load_run(_write(tmp_path / "long.jsonl", _rise(2000)))
    text = repr(run)
    assert len(text) < 300 and text.startswith("Run('long.jsonl', jsonl, 2000 points")


@pytest.mark.parametrize("argv", [["--steps", "100000000"], ["--to", "lr=0.02,steps=1000000"]],
                         ids=["--steps", "--to steps"])
def test_a_transfer_of_a_billion_steps_is_refused_at_once(argv, log, capsys):
    """--steps 1e8 ran for hours (about 0.6 ms a step); a cap refuses it before the fit."""
    to = [] if "--to" in argv else ["--to", "lr=0.02"]
    hparams = "optimizer=adam,momentum=0.9,lr=0.01,group_size=8,batch=32"
    start = time.perf_counter()
    line = _error(["transfer", "--from", log, "--hparams", hparams, *to, *argv], capsys)
    assert time.perf_counter() - start < 10 and "at most 100,000 steps" in line


def test_too_few_steps_to_transfer_name_the_option_that_asked(log, capsys):
    """--to lr=2e-5,steps=1 was answered "--steps 1", an option not given."""
    hparams = "optimizer=adam,momentum=0.9,lr=0.01,group_size=8,batch=32"
    line = _error(["transfer", "--from", log, "--hparams", hparams, "--to", "lr=0.02,steps=1"],
                  capsys)
    assert "--to steps=1: at least 2 steps" in line
    line = _error(["sweep", log, "--hparams", "lr=0.01", "--hparams", "lr=0.02"], capsys)
    assert "given 2 times for 1 log:" in line


@pytest.mark.parametrize("argv,needle", [(["--seed", "-1"], "--seed"),
                                         (["--steps", "10"], "--write-log"),
                                         (["--momentum", "0.5"], "--write-log")],
                         ids=["seed -1 (a traceback)", "steps ignored", "momentum ignored"])
def test_bandit_refuses_what_it_would_ignore_or_crash_on(argv, needle, capsys):
    assert needle in _error(["bandit", "--experiment", "stiffness", *argv], capsys)


def test_bandit_writes_a_log_with_its_defaults(tmp_path, capsys):
    path = tmp_path / "trainer_state.json"
    assert main(["bandit", "--write-log", str(path), "--steps", "30", "--seed", "3",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["steps"] == 30 and result["config"]["momentum"] == 0.0 and path.exists()


def test_an_output_that_cannot_be_made_names_its_path_without_errno(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    line = _error(["export", "--lang", "c", "--out", str(blocker / "sub" / "deeper")], capsys)
    assert str(blocker) in line and "[Errno" not in line


def test_an_until_that_leaves_too_few_points_says_so(tmp_path, capsys):
    path = _write(tmp_path / "every_ten.jsonl", _rise(40), steps=range(10, 410, 10))
    line = _error(["diagnose", path, "--until", "30"], capsys)
    assert path in line and "--until 30 leaves 3 logged points (steps 10-30)" in line


def test_an_until_beyond_the_last_step_is_refused_naming_the_log(log, capsys):
    """--until past the end was taken silently as the whole log."""
    line = _error(["diagnose", log, "--until", "1000"], capsys)
    assert log in line and "--until 1000 is beyond the log's last step 60" in line


@pytest.mark.parametrize("command", [["diagnose", "LOG"], ["report", "LOG"],
                                     ["advise", "--log", "LOG"], ["compare", "LOG"]])
@pytest.mark.parametrize("value", ["0", "1", "-3"])
def test_a_group_size_below_two_is_refused_naming_the_option(command, value, log, capsys):
    """diagnose and report said "group_size must be >= 2" without the option; advise and
    compare took G = 1."""
    argv = [log if a == "LOG" else a for a in command]
    assert "argument --group-size: group_size G must be an integer in [2, 65536]" in _error(
        [*argv, "--group-size", value], capsys)


def test_advice_on_a_reward_far_below_its_ceiling_is_no_division_by_zero(tmp_path, capsys):
    """A rise of 1e-20 per step under the ceiling 1: the gain is below the room's round-off,
    so the slow mode's time is unbounded (it divided by log(1) = 0)."""
    from grpodyn.numerics.advise import late_relaxation

    steps = [float(i) for i in range(1, 61)]
    rng = random.Random(0)
    values = [1e-20 * s * (1 + 0.01 * rng.gauss(0, 1)) for s in steps]
    late = late_relaxation(np.array(steps), np.array(values), ceiling=1.0)
    assert late["rising"] and late["tau"][2] == math.inf
    assert main(["advise", "--log", _write(tmp_path / "tiny.jsonl", values), "--json"]) == 0
    assert "recommendation" in json.loads(capsys.readouterr().out)


def test_compare_shows_a_determined_plateau_with_its_interval(log, capsys):
    """The table printed 2.627 for a plateau whose interval was [-0.325, 5.579]."""
    assert main(["compare", log, "--json"]) == 0
    plateau = json.loads(capsys.readouterr().out)["runs"][0]["plateau"]
    assert plateau["status"] == "determined" and plateau["lower"] < plateau["upper"]
    assert main(["compare", log]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert f"{plateau['value']:.4g} [{plateau['lower']:.4g}, {plateau['upper']:.4g}]" in row


def test_forecast_without_a_cut_runs_to_the_planned_steps(tmp_path, capsys):
    """A TRL trainer_state records max_steps: the rest of the run ends there."""
    history = [{"step": s, "reward": v} for s, v in enumerate(_rise(), start=1)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"max_steps": 100, "log_history": history}))
    assert main(["forecast", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][-1] == 100 and any("planned_steps" in w for w in
                                                       out["warnings"])
    path.write_text(json.dumps({"max_steps": 60, "log_history": history}))  # reached
    assert "is reached" in _error(["forecast", str(path)], capsys)
    every5 = [{"step": 5 * s, "reward": v} for s, v in enumerate(_rise(), start=1)]
    path.write_text(json.dumps({"max_steps": 402, "log_history": every5}))
    assert main(["forecast", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # "to step 402" where the last step was 400
    assert out["steps"][-1] == 400
    assert any(w.startswith("forecast to step 400, the last step at the log's cadence up to "
                            "402, the steps the run was set to take") for w in out["warnings"])


@pytest.mark.parametrize("command", [["fit"], ["forecast", "--train-fraction", "0.5"],
                                     ["diagnose"], ["advise", "--log"]])
def test_a_reward_beyond_the_fits_range_is_refused_naming_the_log(command, tmp_path, capsys):
    """A reward of 1e160 was a traceback (NaN in the noise's bandwidth), 1e20 a bare LP error."""
    path = _write(tmp_path / "huge.jsonl", [1e160 * v for v in _rise()])
    line = _error([*command, path], capsys)
    assert path in line and "1e+12" in line


def test_the_point_stays_inside_its_band_and_its_weights_are_shown(capsys):
    """Rusheel86's shaped reward: at the last steps the curve models' point combination (level
    and power) leaves their band (flat and the lr clock); the point is held at the band's edge
    there, and the text shows the point's weights beside the band's."""
    log = REAL / "Rusheel86__Chaos-Economy__training_logs.reward.json"
    run = load_run(log)
    n_train = run.n_points // 2
    curves = forecast_curve(run.steps, run.reward, n_train=n_train,
                            future_steps=run.steps[n_train:])
    assert np.any(curves.point == curves.upper) or np.any(curves.point == curves.lower)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    point, lower, upper = (np.array(result[k]) for k in ("point", "lower", "upper"))
    assert np.all((lower <= point) & (point <= upper))
    assert result["point_weights"] == {"calibrated_prior": 1.0}
    assert not any("outside the band" in w for w in result["warnings"])
    assert main(["forecast", str(log), "--train-fraction", "0.5"]) == 0
    assert "(the point: calibrated_prior 1.00; the members' stacking: " in capsys.readouterr().out


def test_the_adaptive_forecasters_plateau_reason_names_no_average_forecaster(log, capsys):
    assert main(["forecast", log, "--train-fraction", "0.5", "--forecaster", "adaptive",
                 "--json"]) == 0
    reason = json.loads(capsys.readouterr().out)["plateau"]["reason"]
    assert "average forecaster" not in reason and "this forecaster" in reason


def _long_csv(path, runs):
    """A sweep's long CSV (run_name, metric, step, value), like garg-aayush's lr sweep."""
    rows = ["run_name,metric,step,value"]
    for name, values in runs.items():
        rows += [f"{name},train/reward,{i},{v}" for i, v in enumerate(values)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_a_sweep_reads_every_run_of_a_sweeps_csv(tmp_path, capsys):
    """garg-aayush's CSV holds six lrs; the sweep read one of them and said nothing."""
    path = _long_csv(tmp_path / "lr_sweep.csv", {"lr_sweep_1e-5": _rise(30, tau=12.0),
                                                 "lr_sweep_3e-5": _rise(30, tau=4.0, seed=1),
                                                 "lr_sweep_1e-4": _rise(4, seed=2)})
    hparams = "optimizer=adamw,momentum=0.9,group_size=8,batch=1"
    assert main(["sweep", path, "--hparams", hparams, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    lrs = {run["name"]: run["hparams"]["lr"] for run in result["runs"]}
    assert lrs == {f"{path} [lr_sweep_1e-5]": 1e-5, f"{path} [lr_sweep_3e-5]": 3e-5}
    assert any("[lr_sweep_1e-4]: 4 reward points" in w and "left out" in w
               for w in result["warnings"])
    assert main(["transfer", "--from", path, "--hparams", hparams, "--to", "lr=2e-5",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "lies outside the sources' range" not in " ".join(result["warnings"])


def test_transfer_says_its_target_and_says_a_note_once(tmp_path, capsys):
    """--to batch=4 took the lr and G of the first source without saying so, and the B G
    exponent's status was printed twice, as a note and as a line."""
    path = _long_csv(tmp_path / "lr_sweep.csv", {"lr_sweep_1e-5": _rise(30, tau=12.0),
                                                 "lr_sweep_3e-5": _rise(30, tau=4.0, seed=1)})
    assert main(["transfer", "--from", path, "--hparams",
                 "optimizer=adamw,momentum=0.9,group_size=8,batch=1", "--to", "batch=4"]) == 0
    out = capsys.readouterr().out
    assert "target: optimizer=adam, momentum=0.9, group_size=8, batch=4, lr=1e-05" in out
    assert out.count("the sources share one B G (8)") == 1


@pytest.mark.parametrize(("command", "why"), [
    (["fit"], "a fit needs at least 5 points"),
    (["forecast", "--train-fraction", "0.5"], "the cut leaves 2 training points")])
def test_an_error_about_one_run_of_a_log_names_the_run(command, why, tmp_path, capsys):
    """garg-aayush's lr_sweep_1e-4 holds 4 points: the error named the CSV, not the run."""
    path = _long_csv(tmp_path / "lr_sweep.csv", {"lr_sweep_1e-5": _rise(30),
                                                 "lr_sweep_1e-4": _rise(4)})
    line = _error([command[0], path, "--run", "lr_sweep_1e-4", *command[1:]], capsys)
    assert f"{path} [lr_sweep_1e-4]: {why}" in line


def test_a_sweep_of_console_logs_without_steps_takes_logging_steps(tmp_path, capsys):
    """TRL console logs that print no step: the loader asks for --logging-steps, which sweep
    and transfer take too (for every log), as they take --reward-key."""
    paths = []
    for lr, scale in (("1e-05", 1.0), ("2e-05", 1.5)):
        path = tmp_path / f"console_{lr}.log"
        path.write_text("".join(f"{{'loss': 0.1, 'my_score': {min(scale * v, 1):.4f}, "
                                f"'learning_rate': {lr}}}\n" for v in _rise(30)))
        paths.append(str(path))
    hparams = "optimizer=adam,momentum=0.9,group_size=8,batch=4"
    line = _error(["sweep", *paths, "--hparams", hparams, "--reward-key", "my_score"], capsys)
    assert paths[0] in line and "--logging-steps" in line
    assert main(["sweep", *paths, "--hparams", hparams, "--reward-key", "my_score",
                 "--logging-steps", "10", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 2
    assert main(["transfer", "--from", paths[0], "--hparams", hparams, "--from", paths[1],
                 "--hparams", hparams, "--reward-key", "my_score", "--logging-steps", "10",
                 "--to", "lr=1.5e-5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"][0] == 10  # the logs' first step


def test_the_report_of_a_log_gives_each_missing_constant_its_reason(log, tmp_path, capsys):
    """Without the momentum the report printed "stability_margin: None" and a bare status."""
    assert main(["report", log, "--out", str(tmp_path / "report")]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert "--momentum" in lines["regime"] and "--momentum" in lines["stability_margin"]
    for name in ("tau", "regime", "stability_margin"):
        assert lines[name] != "None" and not lines[name].endswith("not_determined"), name


def test_runs_prints_a_logged_lr_to_four_figures(tmp_path, capsys):
    """A scheduler's lr 9.996978405979462e-06 was printed with all its digits."""
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": v,
                                        "learning_rate": 1e-5 * (1 - s / 7e4)}) + "\n"
                            for s, v in enumerate(_rise(), start=10)))
    assert main(["runs", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("lr ="))
    assert line.strip().startswith("lr = 9.999e-06 [logged]"), line
    assert main(["runs", str(path), "--json"]) == 0
    lr = json.loads(capsys.readouterr().out)["runs"][0]["hyperparameters"]["lr"]["value"]
    assert lr == pytest.approx(1e-5 * (1 - 10 / 7e4))



def test_an_undecided_mode_is_marked_and_its_note_says_why(capsys):
    """garg's lr 1e-5 run: concentration judged 0.45 but undecided was printed unmarked, as if
    clean; Sunshine535's run: a concentration the log cannot judge at all was noted as one
    "the log points to"."""
    garg = REAL / ("garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data."
                   "excerpt.csv")
    assert main(["diagnose", str(garg)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines()
                if x[2:].startswith("policy_concentration"))
    assert line.startswith("? policy_concentration   0.45")
    sun = REAL / ("Sunshine535__nips-grpo-dynamics__results_gates_1_2_logs_gate2_rho1.00_seed42."
                  "excerpt.log")
    assert main(["diagnose", str(sun), "--logging-steps", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    verdict = result["modes"]["policy_concentration"]
    assert verdict["undecided"] and not verdict["judged"]
    note = next(n for n in result["notes"] if n.startswith("policy_concentration: undecided"))
    assert "points to it" not in note and "neither confirm nor rule it out" in note


def test_runs_wraps_its_lines_and_keeps_each_metric_whole(tmp_path, capsys):
    """The metrics, a schedule's evidence and the notes ran past 200 columns on one line."""
    path = tmp_path / "log.jsonl"
    names = ["reward_std", "entropy", "kl", "completion_length", "learning_rate", "epoch"]
    path.write_text("".join(json.dumps({"step": s, "reward": v, **{k: 0.5 for k in names}})
                            + "\n" for s, v in enumerate(_rise(), start=1)))
    assert main(["runs", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines[1:]) and "\xa0" not in "".join(lines)
    at = next(i for i, line in enumerate(lines) if line.startswith("    metrics: "))
    metrics = lines[at] + "".join(" " + x.strip() for x in lines[at + 1:]
                                  if x.startswith("        "))
    for name in names:
        assert f"{name} <- {name}" in metrics, name


def test_compare_names_the_primary_mode_and_says_why_a_number_is_missing(capsys):
    """The table showed "declining" without its failure mode and "at_bound", "not_determined"
    or "not diagnosed" without a reason (the reasons were in the JSON alone)."""
    e8 = REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
                 "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
    garg = REAL / ("garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data."
                   "excerpt.csv")
    assert main(["compare", str(e8), str(garg), "--json"]) == 0
    runs = {r["name"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    short = next(r for r in runs.values() if r["diagnosis"]["state"] is None)
    assert short["diagnosis"]["reason"]
    assert main(["compare", str(e8), str(garg)]) == 0
    out = capsys.readouterr().out
    table, why = out.split("why not determined:\n")
    assert "dynamical_instability (declining)" in table
    said = " ".join(line.strip() for line in why.splitlines())
    for run in runs.values():
        for key in ("plateau", "tau"):
            if run[key]["status"] != "determined":
                assert run[key]["reason"] in said, (run["name"], key)


def test_the_report_page_says_plateau_and_no_python_none(log, tmp_path, capsys):
    """The page printed "momentum None" and the fits' "r_star" beside "plateau r*"."""
    out = tmp_path / "report"
    assert main(["report", log, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    page = (out / "index.html").read_text()
    assert "momentum not known" in page and "plateau=" in page
    for word in ("None", "r_star", "r*"):
        assert word not in page, word


def test_compare_tells_checkpoints_apart_by_their_folders(tmp_path, capsys):
    """Two checkpoints' trainer_state.json were named trainer_state#0 and trainer_state#1."""
    for n, steps in (("checkpoint-100", 40), ("checkpoint-250", 60)):
        (tmp_path / n).mkdir()
        rows = [{"step": i, "reward": r} for i, r in enumerate(_rise(steps), start=1)]
        (tmp_path / n / "trainer_state.json").write_text(json.dumps({"log_history": rows}))
    assert main(["compare", str(tmp_path / "checkpoint-100"), str(tmp_path / "checkpoint-250"),
                 "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)["runs"]]
    assert names == ["checkpoint-100/trainer_state", "checkpoint-250/trainer_state"]


def test_diagnose_prints_the_notes_its_json_holds(capsys):
    """The text left out the diagnosis's notes (why a mode is undecided, that declaring G
    scores the drift lost, a truncation beside a decline): the JSON alone held them."""
    sun = REAL / ("Sunshine535__nips-grpo-dynamics__results_gates_1_2_logs_gate2_rho1.00_seed42."
                  "excerpt.log")
    argv = ["diagnose", str(sun), "--logging-steps", "1"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    text = " ".join(line.strip() for line in capsys.readouterr().out.splitlines())
    shown = [n for n in result["notes"] if n != result["state_evidence"]
             and not any(n.startswith(f"{m}: not judged (") for m in result["modes"])]
    # G unknown reads nothing here (neither mode that reads G is judged): no note on G
    assert any("undecided, the diagnosis abstains" in n for n in shown)
    assert not any("--group-size" in n for n in shown)
    for note in shown:
        assert f"note: {note}" in text, note


def test_runs_says_file_for_a_value_from_the_log_itself(capsys):
    """"[file:<the log's own 120-character name>]" pushed each such line past 200 columns."""
    log = REAL / ("lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                  "checkpoint-1200_trainer_state.excerpt.json")
    assert main(["runs", str(log), "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["runs"][0]["hyperparameters"]["planned_steps"]
    assert planned["source"] == f"file:{log.name}"  # the JSON keeps the name
    assert main(["runs", str(log)]) == 0
    assert "    planned_steps = 1200 [file] max_steps" in capsys.readouterr().out


def test_a_forecast_far_beyond_the_data_with_no_reward_range_says_so(capsys):
    """IMJONEZZ's summed reward (range unknown) cut at 50%: the band reaches [-8.4, 11.7] from a
    training part within [-0.14, 2.5]; the note says where and names --reward-range, and declaring
    the range removes it."""
    log = str(REAL / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.reward.json")
    assert main(["forecast", log, "--train-fraction", "0.5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    notes = [w for w in result["warnings"] if "leaves the training part's span" in w]
    assert len(notes) == 1 and "declare --reward-range" in notes[0]
    lo, hi = (float(v) for v in notes[0].split("span [")[1].split("]")[0].split(", "))
    width = hi - lo
    assert min(result["lower"]) < lo - width or max(result["upper"]) > hi + width
    assert main(["forecast", log, "--train-fraction", "0.5", "--reward-range", "-4,8",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not any("leaves the training part's span" in w for w in result["warnings"])


def test_a_forecast_says_when_the_early_warning_stands_at_its_cut(capsys):
    """ShibukiZero's e8 run collapses after step 20; its precursors fired at step 19, which
    the curve forecast cut at step 20 cannot see: the JSON carries the warning and the first
    note says so. The same log cut at step 12 has no warning standing."""
    log = str(REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_"
                      "off_policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl"))
    assert main(["forecast", log, "--train-fraction", "0.5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    warning = result["early_warning"]
    assert warning["step"] == 19.0 and warning["signals"] == ["kl_rise", "length_departure"]
    assert set(warning["evidence"]) == set(warning["signals"]) and warning["remedy"]
    assert result["warnings"][0].startswith("the early warning fired at step 19 by the cut at "
                                            "step 20 (kl_rise, length_departure)")
    assert main(["forecast", log, "--until", "12", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["early_warning"] is None
    assert not any("early warning" in w for w in result["warnings"])


def test_lr_with_kappa_is_refused(capsys):
    """--lr belongs to --log: with --kappa it was silently ignored."""
    assert "--lr need --log" in _error(["advise", "--kappa", "1", "--lr", "1"], capsys)


def test_advise_says_when_too_few_points_come_from_merged_records(tmp_path, capsys):
    """20 records on 2 steps: the error says they were merged, as diagnose's and fit's do."""
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": [{"step": 1 + i // 10, "reward": 0.1 * (i % 10)}
                                                for i in range(20)]}))
    line = _error(["advise", "--log", str(path)], capsys)
    assert "needs at least 3 logged points, got 2" in line
    assert "20 records shared 2 distinct steps" in line


def test_the_until_help_gives_the_monitors_first_diagnosis(capsys):
    from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, MODE_POINTS

    assert main(["diagnose", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"From {MIN_POINTS} to {MODE_POINTS - 1} points" in text
    assert f"below {MIN_POINTS} it refuses" in text


def test_bandit_names_only_the_options_given_and_a_missing_folder(tmp_path, capsys):
    line = _error(["bandit", "--experiment", "refresh", "--momentum", "0.5"], capsys)
    assert line.count("--steps") == 0 and "--momentum needs --write-log" in line
    line = _error(["bandit", "--write-log", str(tmp_path / "nodir" / "x.json")], capsys)
    assert "--write-log" in line and "does not exist" in line


def test_bandit_write_log_into_a_file_says_it_is_no_folder(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    assert "is not a folder" in _error(["bandit", "--write-log", str(blocker / "x.json")],
                                       capsys)
    assert "--momenta" not in _error(["bandit", "--steps", "5"], capsys)
