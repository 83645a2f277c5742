"""The TRL callback: online forecast and diagnosis, on synthetic log events and in a real run."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("transformers")

from transformers import TrainerControl, TrainerState, TrainingArguments  # noqa: E402

from grpodyn.empirical.callback import GRPODynamicsCallback, GRPODynamicsWarning  # noqa: E402
from grpodyn.ground import InputError  # noqa: E402


def _feed(callback, rewards, *, entropy=None, args=None):
    args = args or TrainingArguments(output_dir="unused", report_to=[], use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    for step, reward in enumerate(rewards, start=1):
        state.global_step = step
        logs = {"reward": float(reward), "loss": 0.1}
        if entropy is not None:
            logs["entropy"] = float(entropy[step - 1])
        state.log_history.append({**logs, "step": step})
        callback.on_log(args, state, control, logs=logs)
    return state, control


def test_forecast_of_a_saturating_run_lands_in_log_history():
    rng = np.random.default_rng(0)
    t = np.arange(1, 301)
    rewards = 0.85 - 0.6 * np.exp(-t / 80) + 0.03 * rng.normal(size=t.size)
    callback = GRPODynamicsCallback(refit_every=10, min_points=30, diagnose_every=0)
    state, _ = _feed(callback, rewards)
    last = state.log_history[-1]
    assert last["grpodyn/plateau"] == pytest.approx(0.85, abs=0.02)
    assert last["grpodyn/tau"] == pytest.approx(80, rel=0.15)
    assert 0 < last["grpodyn/stability_margin"] < 1
    assert "grpodyn/plateau" not in state.log_history[10]  # nothing before min_points


def test_collapse_warns_once_and_can_stop_the_run():
    t = np.arange(1, 201)
    rewards = np.where(t < 120, 0.3 + 0.5 * (1 - np.exp(-t / 30)), 0.01)
    entropy = np.where(t < 120, 0.5, 1e-4)
    callback = GRPODynamicsCallback(diagnose_every=20, stop_on=("dynamical_instability",))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, control = _feed(callback, rewards, entropy=entropy)
    messages = [str(w.message) for w in caught if w.category is GRPODynamicsWarning]
    assert sum("dynamical_instability" in m for m in messages) == 1
    assert control.should_training_stop


def test_bad_options_are_refused():
    with pytest.raises(InputError, match="stop_on"):
        GRPODynamicsCallback(stop_on=("boredom",))
    with pytest.raises(InputError, match="refit_every"):
        GRPODynamicsCallback(refit_every=0)
    with pytest.raises(InputError, match="stop_on: expected a mode's name or a list"):
        GRPODynamicsCallback(stop_on=5)


def test_the_older_fit_every_is_read_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="refit_every"):
        callback = GRPODynamicsCallback(fit_every=7)
    assert callback.refit_every == 7
    with pytest.warns(DeprecationWarning, match="refit_every"):
        assert callback.fit_every == 7
    with pytest.raises(InputError, match="give refit_every alone"):
        GRPODynamicsCallback(fit_every=5, refit_every=7)


def test_the_callback_has_a_one_line_repr():
    text = repr(GRPODynamicsCallback(stop_on="early_warning"))
    assert text == ("GRPODynamicsCallback(stop_on=['early_warning'], refit_every=10, "
                    "diagnose_every=20: no log event yet)")


def test_callback_in_a_real_tiny_grpo_run(tmp_path):
    pytest.importorskip("trl")
    from grpodyn.empirical.tinylm.training import (
        GRPORunSettings,
        build_model,
        build_tokenizer,
        run_grpo,
        warm_up,
    )

    tokenizer = build_tokenizer()
    model = build_model(seed=0)
    warm_up(model, tokenizer, band=(0.25, 0.5), seed=0)
    callback = GRPODynamicsCallback(refit_every=5, min_points=10, diagnose_every=20)
    settings = GRPORunSettings(group_size=4, prompts_per_step=4, steps=30, seed=0)
    result = run_grpo(model, tokenizer, settings, output_dir=tmp_path / "run",
                      callbacks=[callback])
    history = result["log_history"]
    # a 30-step run need not have begun to saturate: then the plateau is logged as a one-sided
    # bound, never as a number the data do not determine
    with_forecast = [h for h in history if any(k.startswith("grpodyn/plateau") for k in h)]
    assert with_forecast, "the callback's forecasts must appear in log_history"
    assert all(math.isfinite(h["grpodyn/tau"]) for h in with_forecast if "grpodyn/tau" in h)
    assert all(("grpodyn/plateau" in h) != ("grpodyn/plateau_lower" in h
                                            or "grpodyn/plateau_upper" in h)
               for h in with_forecast)
    assert with_forecast[0]["step"] >= 10 and callback.group_size == 4


def test_the_monitor_gets_the_length_cap_of_the_training_arguments():
    """GRPOConfig's max_completion_length reaches the monitor (the early warning's cap)."""
    args = TrainingArguments(output_dir="unused", report_to=[], use_cpu=True)
    assert GRPODynamicsCallback()._monitor(args).length_cap is None  # plain Trainer: no cap
    args.max_completion_length = 512
    assert GRPODynamicsCallback()._monitor(args).length_cap == 512


def test_an_sgd_trainer_has_its_own_momentum_not_adams_beta1():
    """transformers builds torch.optim.SGD with optim_args' momentum, 0 without one."""
    args = TrainingArguments(output_dir="unused", report_to=[], use_cpu=True, optim="sgd")
    assert GRPODynamicsCallback()._monitor(args).momentum == 0.0
    args.optim_args = "momentum=0.8,nesterov=True"
    assert GRPODynamicsCallback()._monitor(args).momentum == 0.8
    adam = TrainingArguments(output_dir="unused", report_to=[], use_cpu=True)
    assert GRPODynamicsCallback()._monitor(adam).momentum == adam.adam_beta1


def test_momentum_and_reward_range_given_to_the_callback_win_and_are_checked_early():
    args = TrainingArguments(output_dir="unused", report_to=[], use_cpu=True)
    monitor = GRPODynamicsCallback(momentum=0.5, reward_range=(0, 1))._monitor(args)
    assert (monitor.momentum, monitor.reward_range) == (0.5, (0.0, 1.0))
    with pytest.raises(InputError, match="momentum"):
        GRPODynamicsCallback(momentum=1.0)


def test_a_trainer_momentum_outside_the_unit_interval_warns_instead_of_raising():
    args = TrainingArguments(output_dir="unused", report_to=[], use_cpu=True, adam_beta1=1.0)
    with pytest.warns(GRPODynamicsWarning, match="not in \\[0, 1\\)"):
        monitor = GRPODynamicsCallback()._monitor(args)
    assert monitor.momentum is None
