"""Work done once on the transfer path: the sources are turned into checked sweep runs by
``as_runs`` once, at the entry point (``grpodyn transfer`` and ``transfer``), and not again
by the sweep fit it makes nor by the refits of the band's calibration; a public function
called on its own still checks its input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs import sweep_fit, sweep_transfer
from grpodyn.empirical.logs.sweep import fit_sweep, load_sweep_run, transfer
from grpodyn.ground import InputError
from grpodyn.numerics.mean_field_map import MeanFieldMap

STEPS = 120


def _log(folder: Path, lr: float, seed: int) -> Path:
    """A small SGD log with its settings in ``grpodyn_hparams``."""
    system = MeanFieldMap(lr=lr, kappa=0.5, optimizer="sgd", momentum=0.9)
    mean = 0.7 + system.displacement(STEPS - 1, e0=0.2 - 0.7)[0]
    reward = mean + np.random.default_rng([seed, int(lr * 1e4)]).normal(0, 0.02, STEPS)
    path = folder / f"sgd_lr{lr:g}_seed{seed}.json"
    path.write_text(json.dumps({
        "log_history": [{"step": n + 1, "reward": float(r)} for n, r in enumerate(reward)],
        "grpodyn_hparams": {"optimizer": "sgd", "lr": lr, "momentum": 0.9, "group_size": 8,
                            "batch": 16, "seed": seed}}))
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[str]:
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


def test_a_transfer_converts_its_sources_once(logs, conversions):
    """Two source settings: one fit and two refits, none of which converts the runs again."""
    out = transfer(logs, {"lr": 0.01}, draws=20)
    assert out["band_calibration"]["status"] == "calibrated"
    assert conversions == ["sources"]


def test_the_command_converts_its_sources_once(logs, conversions, capsys):
    argv = ["transfer", *(a for p in logs for a in ("--from", p)), "--to", "lr=0.01", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["band_calibration"]["status"] == "calibrated"
    assert conversions == ["sources"]


def test_a_given_fit_is_not_refitted(logs, conversions):
    fit = fit_sweep(logs)
    transfer(logs, {"lr": 0.01}, fit=fit, cross_validate=False, draws=0)
    assert conversions == ["runs", "sources"]


def test_the_public_functions_still_check_their_own_input(logs):
    run = load_sweep_run(logs[0])
    with pytest.raises(InputError, match="one run given twice"):
        fit_sweep([run, run])
    with pytest.raises(InputError, match="sources: .*one run given twice"):
        transfer([run, run], {"lr": 0.01}, cross_validate=False, draws=0)
    with pytest.raises(InputError, match="sources\\[1\\]: a SweepRun"):
        transfer([run, 3], {"lr": 0.01}, cross_validate=False, draws=0)
    with pytest.raises(InputError, match="runs\\[0\\]: a SweepRun"):
        fit_sweep([3])
    assert len(fit_sweep(logs[0]).runs) == 1  # a path, loaded


def test_the_fit_of_checked_runs_has_the_public_fits_defaults():
    """``transfer`` fits its converted sources with ``fit_runs``: the same fit as ``fit_sweep``."""
    import inspect

    def defaults(function):
        return {k: p.default for k, p in inspect.signature(function).parameters.items()
                if k != "runs"}

    assert defaults(sweep_fit.fit_runs) == defaults(fit_sweep)
