"""Bad and degenerate input to ``grpodyn sweep`` and ``grpodyn transfer`` and their Python API:
one run's errors, a run given twice, target keys the transfer does not carry, misspelt keys and
wrong types, duplicate keys, the last step of the table and the reprs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.cli import main
from grpodyn.empirical.logs import sweep_fit, sweep_transfer
from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run, transfer
from grpodyn.ground import InputError
from grpodyn.numerics.mean_field_map import MeanFieldMap

STEPS = 120


def _log(folder: Path, lr: float, seed: int) -> Path:
    """A small SGD log counting its steps from 1, with its settings in ``grpodyn_hparams``."""
    system = MeanFieldMap(lr=lr, kappa=0.5, optimizer="sgd", momentum=0.9)
    mean = 0.7 + system.displacement(STEPS - 1, e0=0.2 - 0.7)[0]
    reward = mean + np.random.default_rng([seed, int(lr * 1e4)]).normal(0, 0.02, STEPS)
    path = folder / f"sgd_lr{lr:g}_seed{seed}.json"
    path.write_text(json.dumps({
        "log_history": [{"step": n + 1, "reward": float(r)} for n, r in enumerate(reward)],
        "grpodyn_hparams": {"optimizer": "sgd", "lr": lr, "momentum": 0.9, "group_size": 8,
                            "batch": 16, "kl": 0.02, "num_iterations": 1, "seed": seed}}))
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("sweep_input")
    return [str(_log(folder, lr, seed)) for lr in (0.005, 0.02) for seed in (0, 1)]


def test_one_run_has_no_standard_errors(logs):
    constants = fit_sweep([load_sweep_run(logs[0])]).constants()
    for name in ("r0", "kappa"):
        assert constants[name]["stderr"] is None
        assert constants[name]["status"].startswith("not determined: one run fitted")


def test_two_runs_keep_their_standard_errors(logs):
    constants = fit_sweep([load_sweep_run(p) for p in logs[:2]]).constants()
    assert constants["kappa"]["stderr"] is not None and constants["kappa"]["stderr"] > 0


def test_same_run_twice_refused(logs, capsys):
    run = load_sweep_run(logs[0])
    with pytest.raises(InputError, match="given twice"):
        fit_sweep([run, run])
    with pytest.raises(InputError, match="given twice"):
        fit_sweep([run, load_sweep_run(logs[0])])
    assert main(["sweep", logs[0], logs[0]]) == 2
    again = str(Path(logs[0]).parent / "." / Path(logs[0]).name)  # the same file, spelt apart
    assert main(["transfer", "--from", logs[0], "--from", again, "--to", "lr=0.01"]) == 2
    err = capsys.readouterr().err
    assert "given twice" in err and len(err.strip().splitlines()) == 2


@pytest.mark.parametrize("spec", ["kl=0.5", "num_iterations=16"])
def test_unmodelled_target_key_refused(logs, spec, capsys):
    argv = ["transfer", "--from", logs[0], "--from", logs[2], "--to", spec]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    key = spec.split("=")[0]
    assert len(err.splitlines()) == 1 and f"--to {spec}" in err and f"not {key}" in err


def test_target_at_the_sources_kl_accepted(logs):
    out = transfer(logs[:1] + logs[2:3], {"lr": 0.01, "kl": 0.02}, cross_validate=False,
                   draws=0)
    assert out["target"]["kl"] == 0.02


@pytest.mark.parametrize("target, match", [({"learning_rate": 1e-4}, "'learning_rate'.*lr, "),
                                           ({"lr": "1e-4"}, "lr must be a float"),
                                           ({"group_size": 8.5}, "group_size must be an int"),
                                           ({"lr": True}, "lr must be a float")])
def test_api_target_keys_and_types(logs, target, match):
    with pytest.raises(InputError, match=match):
        transfer(logs[:1] + logs[2:3], target, cross_validate=False, draws=0)


def test_api_override_keys(logs):
    with pytest.raises(InputError, match="unknown hyperparameter 'foo'"):
        load_sweep_run(logs[0], {"foo": 1})


def test_api_takes_paths(logs):
    fit = grpodyn.fit_sweep(logs[:1] + logs[2:3])
    assert len(fit.runs) == 2 and all(isinstance(r, SweepRun) for r in fit.runs)
    out = grpodyn.transfer(logs[:1] + logs[2:3], {"lr": 0.01}, cross_validate=False, draws=0)
    assert len(out["mean"]) == STEPS


@pytest.mark.parametrize("option", ["--to", "--hparams"])
def test_duplicate_key_refused(logs, option, capsys):
    spec = "lr=0.01,lr=0.02"
    argv = (["transfer", "--from", logs[0], "--hparams", spec, "--to", "lr=0.01"]
            if option == "--hparams" else ["transfer", "--from", logs[0], "--to", spec])
    assert main(argv) == 2
    assert "lr given twice" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["", " , "])
def test_empty_target_refused(logs, spec, capsys):
    assert main(["transfer", "--from", logs[0], "--to", spec]) == 2
    assert "no hyperparameters to predict" in capsys.readouterr().err


def test_table_ends_at_the_last_step_and_says_its_assumptions(logs, capsys):
    assert main(["transfer", "--from", logs[0], "--from", logs[2], "--to", "lr=0.01"]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if line[:5].strip().isdigit()]
    assert rows[-1][0] == str(STEPS) and rows[0][0] == "1"
    assert "assumes:" in text


def test_reprs_are_one_short_line(logs):
    fit = fit_sweep(logs)
    for text in (repr(fit), repr(fit.runs[0])):
        assert "\n" not in text and len(text) < 300
    assert "log steps 1-120" in repr(fit.runs[0])
    assert repr(fit).startswith("SweepFit(4 runs, 4 fitted")


def test_steps_count_from_the_first_point(logs):
    run = load_sweep_run(logs[0])
    assert run.steps[0] == 0 and run.first_step == 1.0
    assert "first_step + steps" in SweepRun.__doc__


def test_a_key_no_source_states_is_accepted_with_a_note(tmp_path):
    """Sources that do not state num_iterations cannot be compared with a target that does
    (TRL's default 1 was refused with "give one of them", of which there were none): the
    transfer takes it to be the sources' and says so."""
    paths = []
    for lr in (0.005, 0.02):
        path = _log(tmp_path, lr, 0)
        state = json.loads(path.read_text())
        del state["grpodyn_hparams"]["num_iterations"]
        path.write_text(json.dumps(state))
        paths.append(str(path))
    out = transfer(paths, {"lr": 0.01, "num_iterations": 1}, cross_validate=False, draws=0)
    assert any("no source states its num_iterations" in w for w in out["warnings"])


def test_the_same_run_under_two_paths_refused(logs, tmp_path):
    """One file under two spellings of its path, or a copy under another name, is one run:
    refused in the Python API as on the command line (the API compared names only)."""
    import shutil

    copy = tmp_path / "copy.json"
    shutil.copy(logs[0], copy)
    with pytest.raises(InputError, match="one run given twice"):
        fit_sweep([logs[0], str(copy)])
    relative = str(Path(logs[0]).parent / "." / Path(logs[0]).name)
    with pytest.raises(InputError, match="one run given twice"):
        fit_sweep([logs[0], relative])


def test_two_runs_say_their_joint_covariance_is_rank_deficient(logs):
    """Two runs: the cluster-robust covariance has rank <= 1 however many constants it holds;
    each constant with an error says so (their numbers unchanged)."""
    fit = fit_sweep(logs[:1] + logs[2:3])
    statuses = [c["status"] for c in fit.constants().values() if c.get("stderr") is not None]
    assert statuses and all("rank-deficient jointly: 2 runs" in s for s in statuses)


# Work done once on the transfer path: the sources are turned into checked sweep runs by
# ``as_runs`` once, at the entry point (``grpodyn transfer`` and ``transfer``), and not again by
# the sweep fit it makes nor by the refits of the band's calibration; a public function called
# on its own still checks its input.

@pytest.fixture(scope="module")
def four_logs(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("single_pass")
    return [str(_log(folder, lr, seed)) for lr in (0.005, 0.02) for seed in (0, 1)]


@pytest.fixture
def conversions(monkeypatch) -> list[str]:
    """Record the ``name`` of every ``as_runs`` call made by the transfer and the sweep fit."""
    calls: list[str] = []
    real = sweep_fit.as_runs

    def counted(runs, name="runs"):
        calls.append(name)
        return real(runs, name)

    monkeypatch.setattr(sweep_fit, "as_runs", counted)
    monkeypatch.setattr(sweep_transfer, "as_runs", counted)
    return calls


def test_a_transfer_converts_its_sources_once(four_logs, conversions):
    """Two source settings: one fit and two refits, none of which converts the runs again."""
    out = transfer(four_logs, {"lr": 0.01}, draws=20)
    assert out["band_calibration"]["status"] == "calibrated"
    assert conversions == ["sources"]


def test_the_command_converts_its_sources_once(four_logs, conversions, capsys):
    argv = ["transfer", *(a for p in four_logs for a in ("--from", p)), "--to", "lr=0.01", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["band_calibration"]["status"] == "calibrated"
    assert conversions == ["sources"]


def test_a_given_fit_is_not_refitted(four_logs, conversions):
    fit = fit_sweep(four_logs)
    transfer(four_logs, {"lr": 0.01}, fit=fit, cross_validate=False, draws=0)
    assert conversions == ["runs", "sources"]


def test_the_public_functions_still_check_their_own_input(four_logs):
    run = load_sweep_run(four_logs[0])
    with pytest.raises(InputError, match="one run given twice"):
        fit_sweep([run, run])
    with pytest.raises(InputError, match="sources: .*one run given twice"):
        transfer([run, run], {"lr": 0.01}, cross_validate=False, draws=0)
    with pytest.raises(InputError, match="sources\\[1\\]: a SweepRun"):
        transfer([run, 3], {"lr": 0.01}, cross_validate=False, draws=0)
    with pytest.raises(InputError, match="runs\\[0\\]: a SweepRun"):
        fit_sweep([3])
    assert len(fit_sweep(four_logs[0]).runs) == 1  # a path, loaded


def test_the_fit_of_checked_runs_has_the_public_fits_defaults():
    """``transfer`` fits its converted sources with ``fit_runs``: the same fit as ``fit_sweep``."""
    import inspect

    def defaults(function):
        return {k: p.default for k, p in inspect.signature(function).parameters.items()
                if k != "runs"}

    assert defaults(sweep_fit.fit_runs) == defaults(fit_sweep)
