"""``grpodyn sweep``, ``grpodyn transfer`` and ``grpodyn advise --sweep`` on the runs they fit:
the advised run joins its sweep, a run that spans more steps than the map can iterate is refused,
a run whose reward never moved is left out, and a missing hyperparameter names the option of the
command that runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.cli.options import MAX_STEPS
from grpodyn.empirical.logs import sweep_runs
from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run
from grpodyn.ground import InputError
from grpodyn.numerics.mean_field_map import MeanFieldMap

STEPS = 120
SGD = "optimizer=sgd,momentum=0.9,group_size=8,batch=16"
REAL_SWEEP = (Path(__file__).parent / "data" / "real_logs" / "garg-aayush__building-from-"
              "scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv")


def _reward(lr: float, seed: int = 0) -> np.ndarray:
    """A noisy SGD reward path of the map at ``lr``, from 0.2 toward 0.7."""
    system = MeanFieldMap(lr=lr, kappa=0.5, optimizer="sgd", momentum=0.9)
    mean = 0.7 + system.displacement(STEPS - 1, e0=0.2 - 0.7)[0]
    return mean + np.random.default_rng([seed, int(lr * 1e4)]).normal(0, 0.02, STEPS)


def _log(folder: Path, lr: float, *, stride: float = 1) -> str:
    """A JSON log of the SGD run at ``lr`` with its settings; ``stride``: steps between points."""
    path = folder / f"sgd_lr{lr:g}_x{stride:g}.json"
    path.write_text(json.dumps({
        "log_history": [{"step": n * stride, "reward": float(r)}
                        for n, r in enumerate(_reward(lr))],
        "grpodyn_hparams": {"optimizer": "sgd", "lr": lr, "momentum": 0.9, "group_size": 8,
                            "batch": 16, "seed": 0}}))
    return str(path)


def _bare(folder: Path, lr: float) -> str:
    """A CSV of the SGD run at ``lr``: its steps and rewards, no hyperparameter."""
    path = folder / f"bare_lr{lr:g}.csv"
    path.write_text("step,reward\n" + "".join(f"{n},{r!r}\n"
                                              for n, r in enumerate(_reward(lr))))
    return str(path)


def _long_csv(folder: Path) -> str:
    """One CSV that holds a sweep of two runs, each lr read from its run's name."""
    lines = ["run_name,metric,step,value"]
    for lr in (0.005, 0.02):
        lines += [f"lr_sweep_{lr:g},reward,{n},{r!r}" for n, r in enumerate(_reward(lr))]
    path = folder / "sweep.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _out(argv: list[str], capsys) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _error(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("sweep_cli")
    return [_log(folder, lr) for lr in (0.005, 0.02)]


# -- the advised run joins the sweep fit ----------------------------------------------------------

def test_the_log_joins_its_sweep(logs, capsys):
    """--log A --sweep B fitted B alone: one lr, so no exponent, though A and B are at two."""
    alone = _out(["advise", "--log", logs[0], "--sweep", logs[1]], capsys)["basis"]["exponent"]
    both = _out(["advise", "--log", logs[0], "--sweep", logs[0], "--sweep", logs[1]],
                capsys)["basis"]["exponent"]
    assert alone["status"] == "measured" and alone["value"] == pytest.approx(-1, abs=0.2)
    assert alone["value"] == both["value"]


def test_a_log_that_holds_the_sweep_gives_its_other_runs(tmp_path, capsys):
    """--log F --run X --sweep F was refused as "the same file as --log"."""
    log = _long_csv(tmp_path)
    out = _out(["advise", "--log", log, "--run", "lr_sweep_0.005", "--sweep", log,
                "--sweep-hparams", SGD], capsys)
    assert out["basis"]["exponent"]["status"] == "measured"


def test_one_lr_for_a_log_whose_runs_name_theirs_is_said(tmp_path, capsys):
    """``--hparams ...,lr=X`` set every run of a sweep's CSV to X, losing its lrs, unsaid."""
    log = _long_csv(tmp_path)
    said = f"lr=0.01 (--hparams) replaces the lr that the 2 runs of {log} record (0.005, 0.02)"
    assert any(said in w for w in _out(["sweep", log, "--hparams", SGD + ",lr=0.01"],
                                       capsys)["warnings"])
    assert not any("replaces the lr" in w for w in _out(["sweep", log, "--hparams", SGD],
                                                          capsys)["warnings"])


def test_a_real_sweep_file_is_accepted_with_its_short_run_left_out(capsys):
    out = _out(["advise", "--log", str(REAL_SWEEP), "--run", "lr_sweep_1e-5", "--sweep",
                str(REAL_SWEEP), "--sweep-hparams",
                "optimizer=adam,momentum=0.9,group_size=8,batch=8"], capsys)
    assert any("[lr_sweep_1e-4]" in w and "left out" in w for w in out["warnings"])


def test_the_log_alone_as_its_sweep_is_still_refused(logs, capsys):
    again = str(Path(logs[0]).parent / "." / Path(logs[0]).name)
    assert "the same file as --log" in _error(["advise", "--log", logs[0], "--sweep", again],
                                              capsys)


def test_a_log_without_its_hyperparameters_says_how_to_give_them(logs, tmp_path, capsys):
    bare = _bare(tmp_path, 0.005)
    err = _error(["advise", "--log", bare, "--sweep", logs[1]], capsys)
    assert err.startswith(f"grpodyn: error: {bare}: hyperparameters optimizer")
    assert "--sweep-hparams" in err and "joins the sweep fit" in err
    # the log named among the --sweep logs, with its hyperparameters: measured
    out = _out(["advise", "--log", bare, "--sweep", bare, "--sweep", logs[1], "--sweep-hparams",
                f"{SGD},lr=0.005", "--sweep-hparams", f"{SGD},lr=0.02"], capsys)
    assert out["basis"]["exponent"]["status"] == "measured"


# -- a run longer than the map can be iterated over ------------------------------------------------

def test_the_cap_is_the_commands_cap():
    assert sweep_runs.MAX_STEPS == MAX_STEPS


@pytest.mark.parametrize("stride", [1e18, 1000.0])
def test_a_run_over_the_step_cap_is_refused(logs, stride, tmp_path, capsys):
    """Steps 1e18 apart raised at np.arange; 1000 apart (119,000 steps) fitted for minutes."""
    far = _log(tmp_path, 0.02, stride=stride)
    for argv in (["sweep", logs[0], far],
                 ["transfer", "--from", logs[0], "--from", far, "--to", "lr=0.01"],
                 ["advise", "--log", logs[0], "--sweep", far]):
        err = _error(argv, capsys)
        assert err.startswith(f"grpodyn: error: {far}: spans") and "at most 100,000" in err
    with pytest.raises(InputError, match="at most 100,000"):
        fit_sweep([load_sweep_run(far)])


# -- a run whose reward never moved ----------------------------------------------------------------

def _constant(folder: Path, value: float = 0.5) -> str:
    path = folder / "constant.json"
    path.write_text(json.dumps({
        "log_history": [{"step": n, "reward": value} for n in range(STEPS)],
        "grpodyn_hparams": {"optimizer": "sgd", "lr": 0.02, "momentum": 0.9, "group_size": 8,
                            "batch": 16, "seed": 0}}))
    return str(path)


def test_a_constant_run_is_left_out_of_the_sweep(logs, tmp_path, capsys):
    """It was fitted: a tau-lr exponent of the wrong sign and a blank R^2."""
    constant = _constant(tmp_path)
    out = _out(["sweep", logs[0], constant], capsys)
    assert out["n_fitted"] == 1
    entry = next(r for r in out["runs"] if r["name"] == constant)
    assert entry["constant"] and "r2" not in entry
    assert any(w.startswith(f"{constant}: the reward never moved") for w in out["warnings"])
    assert out["tau_lr_exponent"]["sgd"]["value"] is None
    assert main(["sweep", logs[0], constant]) == 0
    assert f"{constant}: constant reward, not fitted" in capsys.readouterr().out


def test_a_sweep_of_constant_runs_alone_is_refused(tmp_path, capsys):
    constant = _constant(tmp_path)
    assert f"{constant} kept a constant reward" in _error(["sweep", constant], capsys)


def test_advise_says_its_constant_sweep_run_was_left_out(logs, tmp_path, capsys):
    constant = _constant(tmp_path)
    out = _out(["advise", "--log", logs[0], "--sweep", constant], capsys)
    assert any(w.startswith(f"{constant}: the reward never moved") for w in out["warnings"])


def test_a_constant_run_is_told_apart_from_a_moving_one():
    def run(reward: np.ndarray) -> SweepRun:
        return SweepRun("r", np.arange(reward.size, dtype=float), reward, {})

    assert sweep_runs.unmoved(run(np.full(20, 0.25)))
    assert not sweep_runs.unmoved(run(np.r_[np.full(19, 0.25), 0.26]))


# -- a missing hyperparameter names the option of the command that runs ----------------------------

def test_advise_names_its_sweep_hparams(logs, tmp_path, capsys):
    """advise said "give them with --hparams", an option it does not have."""
    bare = _bare(tmp_path, 0.02)
    err = _error(["advise", "--log", logs[0], "--sweep", bare], capsys)
    assert err.endswith("give them with --sweep-hparams")
    assert "--sweep-hparams given 2 times" in _error(
        ["advise", "--log", logs[0], "--sweep", bare, "--sweep-hparams", SGD,
         "--sweep-hparams", SGD], capsys)
    assert "--sweep-hparams: 'x=1'" in _error(
        ["advise", "--log", logs[0], "--sweep", bare, "--sweep-hparams", "x=1"], capsys)


def test_advise_names_its_sweep_hparams_for_a_run_of_a_long_csv(logs, tmp_path, capsys):
    err = _error(["advise", "--log", logs[0], "--sweep", _long_csv(tmp_path)], capsys)
    assert err.endswith("give them with --sweep-hparams")


@pytest.mark.parametrize("command", ["sweep", "transfer"])
def test_sweep_and_transfer_name_their_hparams(logs, tmp_path, command, capsys):
    bare = _bare(tmp_path, 0.02)
    argv = (["sweep", logs[0], bare] if command == "sweep" else
            ["transfer", "--from", logs[0], "--from", bare, "--to", "lr=0.01"])
    # transfer binds each --hparams to the --from before it: the message says so
    want = ("give them with --hparams" if command == "sweep" else
            "give them with --hparams after that log's --from")
    assert _error(argv, capsys).endswith(want)


def test_transfer_from_python_names_its_arguments():
    # the Python call names its argument beside the command's option; draws < 0 is refused
    # by name, not by numpy's "negative dimensions"
    from grpodyn.empirical.logs.sweep import transfer
    from grpodyn.ground import InputError

    with pytest.raises(InputError, match=r"draws must be >= 0"):
        transfer([], {"lr": 1e-3}, draws=-5)
    with pytest.raises(InputError, match=r"level \(--level\)"):
        transfer([], {"lr": 1e-3}, level=1.5)


# -- the source of a hyperparameter names the option that gave it ---------------------------------

def test_hyperparameters_given_by_an_option_are_sourced_to_it(tmp_path):
    from grpodyn.cli.sweep_logs import load_log_runs

    bare = _bare(tmp_path, 0.005)
    overrides = sweep_runs.parse_hparams(f"{SGD},lr=0.005")
    run = load_sweep_run(bare, overrides, option="--sweep-hparams")
    assert run.sources["lr"] == "--sweep-hparams"
    # a sweep's CSV: the option's lr ranks above each run's lr read from its name
    runs, notes, _ = load_log_runs(_long_csv(tmp_path), overrides, option="--sweep-hparams")
    assert [(r.hparams["lr"], r.sources["lr"]) for r in runs] == [(0.005, "--sweep-hparams")] * 2
    assert "lr=0.005 (--sweep-hparams) replaces the lr that the 2 runs of" in notes[0]


def test_sweep_and_transfer_take_the_step_key_their_hint_names(tmp_path, capsys):
    paths, hparams = [], []
    for lr in (0.01, 0.02):
        path = tmp_path / f"counted_{lr:g}.jsonl"
        path.write_text("".join(json.dumps({"my_counter": n + 1, "reward": float(r)}) + "\n"
                                for n, r in enumerate(_reward(lr))))
        paths.append(str(path))
        hparams += ["--hparams", f"{SGD},lr={lr}"]
    assert main(["sweep", *paths, *hparams]) == 2
    assert "--step-key" in capsys.readouterr().err
    assert main(["sweep", *paths, *hparams, "--step-key", "my_counter", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_fitted"] == 2 and [run["name"] for run in out["runs"]] == paths
    assert main(["transfer", "--from", paths[0], "--hparams", f"{SGD},lr=0.01", "--step-key",
                 "my_counter", "--to", "lr=0.015,steps=40", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["mean"]) == 40


def test_each_run_of_a_sweep_says_which_metric_it_fitted(capsys):
    hparams = "optimizer=adam,momentum=0.9,group_size=8,batch=32"
    assert main(["sweep", str(REAL_SWEEP), "--hparams", hparams, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert runs and all(run["reward_key"] == "eval/reward" for run in runs)
    assert main(["sweep", str(REAL_SWEEP), "--hparams", hparams]) == 0
    assert "R^2" in (out := capsys.readouterr().out) and "(reward: eval/reward)" in out


def test_a_sweep_refuses_a_step_key_that_names_the_reward(tmp_path, capsys):
    paths = [_log(tmp_path, lr) for lr in (0.01, 0.02)]
    assert main(["sweep", *paths, "--step-key", "reward"]) == 2
    assert "--step-key reward is the column read as the reward" in capsys.readouterr().err


def test_a_sweep_takes_its_own_record_as_it_stands_and_refuses_a_bad_value(tmp_path):
    """The record ranks above the loader's reading: a logged lr does not replace it, and a
    value the loader passes over (with a note) is refused by the sweep."""
    path = Path(_log(tmp_path, 0.03))
    state = json.loads(path.read_text())
    for entry in state["log_history"]:
        entry["learning_rate"] = 0.02
    path.write_text(json.dumps(state))
    run = load_sweep_run(path)
    assert run.hparams["lr"] == 0.03 and run.sources["lr"] == "log (grpodyn_hparams)"
    state["grpodyn_hparams"]["group_size"] = -4
    path.write_text(json.dumps(state))
    with pytest.raises(InputError, match="group_size"):
        load_sweep_run(path)
    from grpodyn.empirical.logs.loaders import load_run
    assert any("grpodyn_hparams.group_size = -4" in w for w in load_run(path).warnings)


def test_one_hparams_lr_for_logs_that_record_different_lrs_is_said(tmp_path, capsys):
    """--hparams given once reaches every log: an lr there replaces the lrs the logs record,
    and the sweep says so (it then has one lr and no lr law to measure)."""
    logs = [_log(tmp_path, 0.01), _log(tmp_path, 0.02)]
    out = _out(["sweep", *logs, "--hparams", "lr=0.01"], capsys)
    said = [w for w in out["warnings"] if "the 2 logs given the same --hparams" in w]
    assert len(said) == 1 and "(0.01, 0.02)" in said[0] and "its own --hparams" in said[0]
    out = _out(["sweep", *logs, "--hparams", "group_size=8"], capsys)
    assert not [w for w in out["warnings"] if "given the same" in w]
