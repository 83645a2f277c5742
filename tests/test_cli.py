"""The command-line contract (docs/architecture.md): commands, their JSON keys, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grpodyn.cli import main

PREDICT_KEYS = {"mass", "damping", "stiffness", "zeta", "omega0", "tau", "regime",
                "critical_stiffness", "critical_stiffness_discrete", "stiffness_max",
                "refresh_max", "staleness_max"}


def _run_json(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def test_predict_json_keys(capsys):
    result = _run_json(capsys, ["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                                "--json"])
    assert PREDICT_KEYS <= set(result)
    assert result["regime"] == "oscillatory"
    assert result["stiffness_max"] == pytest.approx(3.8)
    assert result["critical_stiffness"] == pytest.approx(0.1**2 / 3.8)


def test_predict_with_noise_refresh_and_trajectory(capsys):
    result = _run_json(capsys, ["predict", "--lr", "0.05", "--momentum", "0.5", "--kappa", "1",
                                "--refresh", "3", "--noise", "1e-4", "--r0", "0.2", "--r-star",
                                "0.8", "--steps", "40", "--json"])
    assert len(result["trajectory"]) == 41 and result["trajectory"][0] == pytest.approx(0.2)
    assert result["stationary_variance"] > 0
    assert result["refresh_max"] == 21  # k = 0.05, beta = 0.5: first unstable K = 22


def test_predict_regimes(capsys):
    regimes = [_run_json(capsys, ["predict", "--lr", lr, "--momentum", "0.5", "--kappa", "1",
                                  "--json"])["regime"] for lr in ("0.01", "0.5", "2.95", "3.2")]
    assert regimes == ["overdamped", "oscillatory", "flip", "unstable"]


@pytest.mark.parametrize("argv,needle", [
    (["predict", "--lr", "-1", "--momentum", "0.5", "--kappa", "1"], "lr"),
    (["predict", "--lr", "0.1", "--momentum", "1", "--kappa", "1"], "momentum"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "nan"], "kappa"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--refresh", "0"],
     "refresh"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--group-size", "1",
      "--r0", "0.1", "--r-star", "0.5"], "group_size"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--steps", "10"], "r0"),
    (["predict", "--lr", "0.1"], "required"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    assert main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def test_console_script_and_module_entry_point():
    for cmd in (["grpodyn"], [sys.executable, "-m", "grpodyn"]):
        proc = subprocess.run([*cmd, "predict", "--lr", "0.1", "--momentum", "0", "--kappa", "1",
                               "--json"], capture_output=True, text=True, check=True)
        assert json.loads(proc.stdout)["regime"] == "overdamped"
    help_text = subprocess.run(["grpodyn", "--help"], capture_output=True, text=True, check=True)
    assert "predict" in help_text.stdout


def test_regime_map_matches_pointwise_regime():
    import numpy as np

    from grpodyn.numerics.stability import REGIMES, regime, regime_map

    beta = np.linspace(0, 0.95, 7)[:, None]
    k = np.geomspace(1e-4, 5, 9)[None, :]
    codes = regime_map(beta, k)
    for i in range(beta.shape[0]):
        for j in range(k.shape[1]):
            assert REGIMES[codes[i, j]] == regime(momentum=float(beta[i, 0]),
                                                  stiffness=float(k[0, j]))


def test_report_on_a_user_log(tmp_path, capsys):
    log = tmp_path / "log.csv"
    steps = range(1, 201)
    log.write_text("step,reward,entropy\n" + "".join(
        f"{s},{0.85 - 0.6 * 2.718281828 ** (-s / 50) + 0.02 * ((s * 7919) % 13 - 6) / 6:.5f},"
        f"{0.8 - 0.001 * s:.4f}\n" for s in steps))
    before = log.read_bytes()
    out = tmp_path / "report"
    assert main(["report", str(log), "--out", str(out), "--momentum", "0.9", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (out / "index.html").is_file() and (out / "reward_forecast.png").is_file()
    assert result["dynamics"]["plateau"] == pytest.approx(0.85, abs=0.03)
    assert result["dynamics"]["regime"] in ("overdamped", "critical", "oscillatory")
    assert set(result["diagnosis"]["modes"]) == {"reward_hacking", "advantage_degeneracy",
                                                 "policy_concentration",
                                                 "dynamical_instability"}
    assert log.read_bytes() == before


def test_advise_critical_and_margin(capsys):
    assert main(["advise", "--kappa", "2", "--momentum", "0.9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    k_c = (1 - 0.9 ** 0.5) ** 2
    assert out["learning_rate"] == pytest.approx(k_c / 2, rel=1e-9)
    assert out["regime"] == "critical" and out["reasoning"]
    assert main(["advise", "--kappa", "2", "--momentum", "0.5", "--target", "margin",
                 "--margin", "0.5", "--refresh", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stiffness"] == pytest.approx(0.5 * out["stiffness_limit"], rel=1e-9)
    assert out["refresh_max"] >= 4 and out["regime"] != "unstable"


def test_advise_settling_target(capsys):
    """--target settling: the least k whose response from rest settles soonest into the 10% band
    (an overshoot within it), checked on the map's response; the same JSON keys."""
    import numpy as np

    from grpodyn.numerics.settling import settling_steps, step_response

    assert main(["advise", "--kappa", "2", "--momentum", "0.9", "--target", "settling",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    k_c = (1 - 0.9 ** 0.5) ** 2
    k_s = out["stiffness"]
    assert out["learning_rate"] == pytest.approx(k_s / 2, rel=1e-12)
    assert out["regime"] == "oscillatory" and 2.5 < k_s / k_c < 3.1
    fewer = settling_steps(momentum=0.9, stiffness=np.array([k_c, 0.999 * k_s, k_s]))
    assert fewer[2] < fewer[0] and fewer[2] < fewer[1]
    overshoot = -step_response(momentum=0.9, stiffness=k_s, steps=400).min()
    assert 0 < overshoot <= 0.1
    assert any("critical damping, the fastest without overshoot" in r for r in out["reasoning"])


def test_advise_needs_one_source(capsys):
    assert main(["advise", "--momentum", "0.9", "--json"]) == 2
    assert "--kappa" in capsys.readouterr().err


def test_grpodyn_alone_prints_the_usage_and_exits_0(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: grpodyn") and "report" in out and "--version" in out


def test_version(capsys):
    from grpodyn import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"grpodyn {__version__}"


def test_every_option_of_every_command_has_help_text():
    """Walk the parser: every argument of the program and of each command says what it does."""
    import argparse

    from grpodyn.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"grpodyn {option}" for action in parser._actions
               for option in action.option_strings if not action.help]
    assert {c.dest for c in commands._choices_actions} == set(commands.choices)
    assert all(c.help for c in commands._choices_actions)  # each command's line in the usage
    for name, sub in commands.choices.items():
        missing += [f"grpodyn {name} {action.option_strings or action.dest}"
                    for action in sub._actions
                    if not action.help or action.help == argparse.SUPPRESS]
    assert missing == []


def test_report_help_says_it_takes_an_optional_log(capsys):
    assert main(["report", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: grpodyn report [LOG]") and "optional training LOG" in out
    assert main([]) == 0
    assert "[LOG]" in capsys.readouterr().out


def test_progress_bars_on_a_terminal_and_quiet_under_json(monkeypatch, capsys):
    """tqdm bars on stderr when it is a terminal; nothing on stderr under --json or off one."""
    pytest.importorskip("tqdm")
    from pathlib import Path

    grid = Path(__file__).parents[1] / "studies" / "tiny_grids" / "data" / "tiny_grid"
    if not grid.is_dir():
        pytest.skip("the tiny grid lives in the repository's studies/ folder, absent here")
    logs = [str(grid / f"adam_lr0.0006_G4_B8_seed{seed}.json") for seed in (0, 1)]
    assert main(["sweep", *logs]) == 0
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["sweep", *logs, "--json"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["sweep", *logs]) == 0
    err = capsys.readouterr().err
    assert "loading runs" in err and "fitting 2 runs jointly" in err


def test_runs_prints_a_float_hyperparameter_without_float_noise(capsys):
    from pathlib import Path

    log = (Path(__file__).parent / "data" / "real_logs" / "ijinyu1113__Learned-Remasking-Policy-"
           "for-dLLM__pretrained_checkpoints_checkpoint-2000_trainer_state.excerpt.json")
    assert main(["runs", str(log)]) == 0
    out = capsys.readouterr().out
    assert "lr = 2.34e-05 [logged]" in out and "0000000" not in out


def test_fit_says_a_shape_parameter_its_error_exceeds_is_not_determined():
    """The lzhihan excerpt printed zeta=4.551+-1e+02: four digits of a number the data leave
    open; a level (r0, the plateau) near zero keeps its digits."""
    from grpodyn.empirical.logs.fit_text import shown_param

    entry = {"at_bounds": [], "stderr": {"zeta": 100.0, "omega0": 0.01, "r0": 0.7}}
    assert shown_param(entry, "zeta", 4.551) == "zeta=not determined (4.6+-1e+02)"
    assert shown_param(entry, "omega0", 0.0639) == "omega0=0.0639+-0.01"
    assert shown_param(entry, "r0", 0.5381) == "r0=0.5381+-0.7"


def test_predict_prints_the_degenerate_group_odds_as_numbers_not_a_dict(capsys):
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--r0", "0.2",
                 "--plateau", "0.8", "--group-size", "8"]) == 0
    out = capsys.readouterr().out
    assert "degenerate_group_probability: start 0.167775, plateau 0.167775" in out
    assert "{" not in out and "000000" not in out


@pytest.mark.parametrize("argv,needle", [(["--steps", "0"], "--steps"),
                                         (["--steps", "5"], "r0, plateau and steps"),
                                         (["--group-size", "4"], "r0 and plateau")])
def test_predict_errors_speak_of_the_plateau_and_of_steps(argv, needle, capsys):
    """--steps 0 was told that a trajectory needs r0, r_star and steps."""
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "r_star" not in err


def test_the_report_of_a_log_says_why_a_number_is_not_determined(tmp_path, capsys):
    """It printed "tau: not_determined", "regime: not determined", "stability_margin: None"."""
    from pathlib import Path

    log = (Path(__file__).parent / "data" / "real_logs" / "lzhihan__grpo-math-pipeline__outputs_"
           "grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_trainer_state.excerpt.json")
    assert main(["report", str(log), "--out", str(tmp_path / "report")]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    for name in ("tau", "regime", "stability_margin"):
        assert lines[name].startswith("not_determined: ") and "None" not in lines[name]
    assert "momentum unknown" in lines["regime"]


def test_the_per_model_notes_are_merged_into_one_line_each():
    """A forecast printed six notes, each ending "(a result of the box, not of the data)"."""
    from grpodyn.cli.options import merged_notes

    box = "at the fit's bound (a result of the box, not of the data)"
    notes = ["momentum unknown", f"power: t_mid, exponent {box}",
             "sigmoid: singular information matrix; no standard errors",
             f"inertial: zeta {box}", "power: singular information matrix; no standard errors"]
    assert merged_notes(notes) == [
        "momentum unknown", f"{box}: power t_mid, exponent; inertial zeta",
        "singular information matrix, no standard errors: sigmoid; power"]


def test_the_repr_of_a_forecast_shows_the_number_the_command_prints(capsys):
    """The repr showed the mean (0.7736) where ``grpodyn forecast`` prints the point (0.7693)."""
    from pathlib import Path

    import grpodyn

    log = (Path(__file__).parent / "data" / "real_logs" / "lzhihan__grpo-math-pipeline__outputs_"
           "grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_trainer_state.excerpt.json")
    fc = grpodyn.analyse_run(grpodyn.load_run(log), train_fraction=0.5).forecast
    assert fc.point is not None and fc.point[-1] != fc.mean[-1]
    assert f"last step 770: {fc.point[-1]:.4g} [" in repr(fc)


def test_the_report_of_a_log_never_writes_over_the_log(tmp_path, capsys):
    """A log named summary.json, reported into its own folder, was replaced by the summary."""
    import shutil
    from pathlib import Path

    from grpodyn.cli.report import RUN_REPORT_FILES

    source = (Path(__file__).parent / "data" / "real_logs" / "lzhihan__grpo-math-pipeline__"
              "outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_trainer_state.excerpt.json")
    log = tmp_path / "summary.json"
    shutil.copy(source, log)
    assert main(["report", str(log), "--out", str(tmp_path)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert log.read_bytes() == source.read_bytes()
    assert main(["report", str(source), "--out", str(tmp_path / "r")]) == 0
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(RUN_REPORT_FILES)


def test_fit_says_when_a_curve_passes_the_estimated_r2_ceiling(capsys):
    """The IMJONEZZ reward excerpt: the inertial fit's R^2 passes the ceiling estimated from
    first differences; the line says the ceiling is an estimate instead of standing beside a
    larger R^2 unexplained."""
    from pathlib import Path

    log = str(Path(__file__).parent / "data" / "real_logs"
              / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.reward.json")
    assert main(["fit", log, "--model", "inertial"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "R^2 ceiling" in x)
    assert "inertial passes it: the ceiling is an estimate" in line
    assert main(["fit", log, "--model", "inertial", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["models"]["inertial"]["r2"] > out["noise"]["r2_ceiling"]


def test_predict_gives_the_slowest_poles_decay_time_beside_the_overdamped_tau(capsys):
    """Oscillatory at lr 0.01, beta 0.9: tau = c / k = 10 steps, but the poles' radius is
    sqrt(beta), so the envelope decays in -1 / ln sqrt(0.9) = 19.0 steps; overdamped at a
    hundredth of the lr, the decay time approaches tau."""
    import math

    fast = _run_json(capsys, ["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                              "--json"])
    assert fast["regime"] == "oscillatory" and fast["tau"] == pytest.approx(10)
    assert fast["decay_time"] == pytest.approx(-1 / math.log(math.sqrt(0.9)))
    slow = _run_json(capsys, ["predict", "--lr", "0.0001", "--momentum", "0.9", "--kappa", "1",
                              "--json"])
    assert slow["regime"] == "overdamped"
    assert slow["decay_time"] == pytest.approx(slow["tau"], rel=0.02)


def test_predict_says_what_tau_is_where_the_map_oscillates(capsys):
    """The terminal names the overdamped reading of tau and the envelope's decay time where the
    map oscillates, and says nothing more where it is overdamped."""
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1"]) == 0
    assert "note: tau = c / k is the overdamped reading" in capsys.readouterr().out
    assert main(["predict", "--lr", "0.0001", "--momentum", "0.9", "--kappa", "1"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_fit_prints_no_digits_for_a_parameter_at_its_box_or_of_a_singular_fit():
    """The guide: a parameter the data do not determine is never a digit string; the lzhihan log
    printed t_mid=1.738e-09 (at bound) and inertial zeta=301.5 from a singular fit."""
    from grpodyn.empirical.logs.fit_text import shown_param

    boxed = {"at_bounds": ["t_mid"], "stderr": {"t_mid": None}}
    assert shown_param(boxed, "t_mid", 1.738e-09) == "t_mid=not determined (at its bound, 1.7e-09)"
    singular = {"at_bounds": [], "stderr": {}, "singular": True}
    assert shown_param(singular, "zeta", 301.5) == "zeta=not determined (3e+02, no standard error)"
    assert shown_param({"at_bounds": ["r0"], "stderr": {}}, "r0", 0.0) == "r0=0 (at bound)"


def test_fit_json_holds_no_diagnosis_it_did_not_make(capsys) -> None:
    # grpodyn fit makes no diagnosis: no "diagnosis": null, which reads as "none found"
    from pathlib import Path

    log = Path(__file__).parent / "data" / "real_logs" / (
        "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
        "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
    out = _run_json(capsys, ["fit", str(log), "--json"])
    assert "diagnosis" not in out and "models" in out


def test_a_forecast_notes_no_bound_of_a_model_that_carries_no_weight():
    """"sigmoid: t_mid at the fit's bound" was noted where the sigmoid had no weight."""
    from pathlib import Path

    import grpodyn
    from grpodyn.empirical.logs.fit_text import NOTED_WEIGHT

    log = (Path(__file__).parent / "data" / "real_logs" / "lzhihan__grpo-math-pipeline__outputs_"
           "grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_trainer_state.excerpt.json")
    analysis = grpodyn.analyse_run(grpodyn.load_run(log))
    at_bound = [name for name, fit in analysis.fits.items() if fit.params_at_bounds]
    assert at_bound  # the sigmoid's t_mid sits on its bound here
    for name in at_bound:
        noted = any(w.startswith(f"{name}: ") and "bound" in w for w in analysis.warnings)
        assert noted == (analysis.weights.get(name, 0.0) >= NOTED_WEIGHT), name
