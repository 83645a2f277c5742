"""The Python API refuses what the command line refuses, with an error that names the input.

A bad ``logging_steps`` to ``load_runs``, a reward beyond 1e12, a per-sample reward or a step
counter that starts again fed to the Monitor, a config, fit, frame or run of the wrong type, a
table where a series is expected, options of the wrong kind; and what stays accepted: a column
of numbers as a series, a one-element array as one reward, numpy integers.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.empirical.diagnostics.early_warning import early_warning, standing_warning
from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_run, load_runs
from grpodyn.empirical.logs.run_analysis import analyse_run
from grpodyn.empirical.logs.sweep import transfer
from grpodyn.empirical.monitor import GRPODynamicsWarning, Monitor
from grpodyn.ground import InputError
from grpodyn.numerics.curve_models import curve_model
from grpodyn.numerics.fit import fit_curve

CONSOLE = (Path(__file__).parent / "data" / "real_logs"
           / "Sunshine535__nips-grpo-dynamics__results_gates_1_2_logs_gate2_rho1.00_seed42"
             ".excerpt.log")


def _log(path: Path, reward: np.ndarray) -> Path:
    path.write_text("\n".join(json.dumps({"step": i + 1, "reward": float(r)})
                              for i, r in enumerate(reward)))
    return path


@pytest.fixture
def rise(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    steps = np.arange(60)
    return _log(tmp_path / "rise.jsonl",
                0.2 + 0.5 * (1 - np.exp(-steps / 15)) + 0.02 * rng.standard_normal(60))


@pytest.mark.parametrize("logging_steps", ["2", 0, -3, True])
def test_load_runs_checks_logging_steps_as_load_run_does(logging_steps):
    """Not "2" as text to repeat into steps 2, 22, 222, nor 0 or -3 as spacings."""
    with pytest.raises(LogFormatError, match="logging_steps must be a positive integer"):
        load_runs(CONSOLE, logging_steps=logging_steps)


def test_a_numpy_integer_is_a_logging_interval():
    assert np.array_equal(load_runs(CONSOLE, logging_steps=np.int64(2))[0].steps,
                          load_runs(CONSOLE, logging_steps=2)[0].steps)


@pytest.mark.parametrize("spike", [1e13, 1e200])
def test_a_reward_beyond_1e12_is_refused_by_every_analysis(tmp_path, spike):
    """A reward of 1e13 made the diagnosis call a rise flat, 1e200 a NaN deep in the noise."""
    reward = np.linspace(0.2, 0.7, 60)
    reward[30] = spike
    run = load_run(_log(tmp_path / "spike.jsonl", reward))
    for call in (lambda: grpodyn.diagnose(run), lambda: advise_log(run),
                 lambda: analyse_run(run)):
        with pytest.raises(InputError, match="beyond 1e\\+12"):
            call()


def test_the_monitor_says_why_it_skips_a_reward_not_a_number_or_a_step_passed():
    monitor = Monitor()
    for step in range(1, 31):
        monitor.update(step, {"reward": 0.5 + 0.01 * step})
    with pytest.warns(GRPODynamicsWarning, match="not one number") as caught:
        for step in range(31, 41):
            monitor.update(step, {"reward": np.array([0.5, 0.6])})
    assert len(caught) == 1 and "ndarray" in str(caught[0].message)
    with pytest.warns(GRPODynamicsWarning, match="restarted step counter") as caught:
        for step in range(1, 11):
            state = monitor.update(step, {"reward": 0.9})
    assert len(caught) == 1
    assert state.points == 30
    assert any("10 reward(s) not one number skipped" in n for n in state.notes)
    assert any("10 reward(s) at a step not after" in n for n in state.notes)
    with warnings.catch_warnings():  # a reward given as a string is not one either: no hint
        warnings.simplefilter("error")
        fresh = Monitor()
        with pytest.raises(GRPODynamicsWarning, match="not one number"):
            fresh.update(1, {"reward": "0.5"})


@pytest.mark.parametrize("reward", [np.array([0.5]), np.array(0.5), [0.5], np.float32(0.5)])
def test_a_one_element_array_is_one_reward(reward):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no skip, and no numpy deprecation of float(array)
        assert Monitor().update(1, {"reward": reward}).points == 1


def test_a_numpy_bool_is_no_reward_and_a_skipped_event_keeps_its_held_out_value():
    monitor = Monitor()
    with pytest.warns(GRPODynamicsWarning, match="not one number"):
        monitor.update(1, {"reward": np.True_})
    monitor.update(1, {"reward": 0.4})
    state = monitor.update(1, {"reward": np.array([0.5, 0.6]), "eval_reward": 0.3})
    assert monitor.run().metrics["heldout_reward"][0] == 0.3
    assert any("2 reward(s) not one number skipped" in note for note in state.notes)


def test_wrong_types_are_named_not_attribute_errors(rise):
    with pytest.raises(InputError, match="config: expected a BanditConfig"):
        grpodyn.simulate_bandit({"lr": 0.1}, steps=10)
    with pytest.raises(LogFormatError, match="expected a pandas DataFrame"):
        Run.from_pandas({"step": [1, 2], "reward": [0.1, 0.2]})
    for function in (early_warning, standing_warning):
        with pytest.raises(InputError, match=r"run must be a Run \(grpodyn.load_run"):
            function(str(rise))


def test_transfer_refuses_a_fit_that_is_not_one_and_a_single_draw(rise):
    with pytest.raises(InputError, match="fit: expected a SweepFit"):
        transfer([str(rise)], {"lr": 2e-5}, fit="x")
    with pytest.raises(InputError, match="one draw has no spread"):
        transfer([str(rise)], {"lr": 2e-5}, draws=1)


def test_a_log_path_missing_its_settings_is_told_the_python_way(rise):
    """The Python transfer said "give them with --hparams", an option of the command line."""
    with pytest.raises(InputError, match=r"give them with load_sweep_run\(path, overrides="):
        transfer([str(rise)], {"lr": 2e-5})


def test_a_table_is_not_read_as_a_series_and_a_column_is():
    table = np.random.default_rng(0).random((4, 6))
    with pytest.raises(InputError, match=r"reward must be one-dimensional, .* \(4, 6\)"):
        grpodyn.estimate_noise(table)
    with pytest.raises(InputError, match="steps must be one-dimensional"):
        fit_curve("exponential", np.arange(12.0).reshape(3, 4), table[:3, :4])
    column = table[:, :1].repeat(3, axis=0)
    assert grpodyn.estimate_noise(column).sigma == grpodyn.estimate_noise(column.ravel()).sigma
    t = np.arange(30.0)
    y = 1 - np.exp(-t / 8) + 0.01 * np.random.default_rng(1).standard_normal(30)
    assert fit_curve("exponential", t[:, None], y[None, :]).params == pytest.approx(
        fit_curve("exponential", t, y).params)


def test_options_of_the_wrong_kind_are_refused(rise):
    run = load_run(rise)
    with pytest.raises(InputError, match="models: give at least one curve model"):
        analyse_run(run, models=())
    with pytest.raises(InputError, match="stack must be True or False, got 'no'"):
        analyse_run(run, stack="no")
    for group_size in (0, 8.5):  # read by the diagnosis alone, and refused without it too
        with pytest.raises(InputError, match="group_size"):
            analyse_run(run, group_size=group_size, diagnose_run=False)
    from grpodyn.empirical.diagnostics.diagnose import diagnose
    with pytest.raises(InputError, match="warning must be True or False, got 'no'"):
        diagnose(run, warning="no")
    from grpodyn.numerics.predict import predict
    with pytest.raises(InputError, match=r"refresh \(--refresh\) or staleness"):
        predict(lr=0.01, momentum=0.9, kappa=1.0, refresh=2, staleness=2)
    with pytest.raises(InputError, match=r"give steps \(--steps N\) or group_size"):
        predict(lr=0.01, momentum=0.9, kappa=1.0, r0=0.2)
    with pytest.raises(InputError, match="sweep_short: expected SweepRuns"):
        advise_log(run, sweep_short=["x"])
    with pytest.raises(InputError, match="sweep_short: expected a sequence of SweepRuns"):
        advise_log(run, sweep_short=3)
    assert advise_log(run, sweep_short=None).to_dict() == advise_log(run).to_dict()
    assert advise_log(run, sweep_short=iter(())).to_dict() == advise_log(run).to_dict()


def test_a_curve_models_repr_is_one_short_line():
    t = np.arange(50.0)
    model = curve_model("sigmoid", t, 1 - np.exp(-t / 10))
    text = repr(model)
    assert len(text) < 160 and "0x" not in text and "t_mid in [" in text
