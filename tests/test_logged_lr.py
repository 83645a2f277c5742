"""The learning rate from a logged series: one rounded to 0, and a config that disagrees."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn.empirical.logs.infer import infer_meta
from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta


def _run(lr: np.ndarray) -> Run:
    steps = np.arange(1.0, lr.size + 1)
    return Run(source="x.jsonl", format="jsonl", steps=steps, reward=0.5 + 0 * steps,
               metrics={"learning_rate": lr}, reward_key="reward")


def test_a_learning_rate_logged_as_zero_is_no_lr_and_the_advice_comes_as_a_ratio(tmp_path, capsys):
    from grpodyn.cli import main

    path = tmp_path / "lr_zero.jsonl"
    rng = np.random.default_rng(1)
    with path.open("w") as fh:
        for step in range(1, 61):
            reward = 0.7 - 0.6 * np.exp(-step / 15) + rng.normal(0, 0.03)
            fh.write(json.dumps({"step": step, "reward": round(float(reward), 4),
                                 "learning_rate": 0.0}) + "\n")
    run = load_run(path)
    assert run.meta.lr is None
    assert any("learning_rate is logged as 0" in w for w in run.warnings)
    main(["advise", "--log", str(path), "--json"])
    advice = json.loads(capsys.readouterr().out)
    assert advice["recommendation"]["lr"] is None
    assert advice["recommendation"]["lr_ratio"] > 0


def test_a_constant_logged_lr_replaces_a_config_that_disagrees():
    meta = RunMeta(lr=Hyperparameter(2e-6, "file:config.yaml", "the config"))
    meta, notes = infer_meta(_run(np.full(50, 1e-6)), meta)
    assert meta.lr.value == pytest.approx(1e-6) and meta.lr.source == "logged"
    assert any("constant at 1e-06" in n and "file:config.yaml gives 2e-06" in n for n in notes)


def test_a_logged_peak_above_the_config_replaces_it():
    meta = RunMeta(lr=Hyperparameter(1e-6, "file:config.yaml", "the config"))
    meta, _ = infer_meta(_run(np.linspace(3e-6, 1e-6, 50)), meta)
    assert meta.lr.value == pytest.approx(3e-6)


def test_a_decaying_schedule_read_below_the_config_keeps_the_config_with_a_note():
    meta = RunMeta(lr=Hyperparameter(2e-6, "file:config.yaml", "the config"))
    meta, notes = infer_meta(_run(np.linspace(1.5e-6, 1e-7, 50)), meta)
    assert meta.lr.value == pytest.approx(2e-6) and meta.lr.source == "file:config.yaml"
    assert any("the config's is kept" in n for n in notes)


def test_a_config_that_agrees_with_the_log_says_nothing():
    meta = RunMeta(lr=Hyperparameter(1e-6, "file:config.yaml", "the config"))
    meta, notes = infer_meta(_run(np.full(50, 1.02e-6)), meta)
    assert meta.lr.value == pytest.approx(1e-6) and not any(n.startswith("lr:") for n in notes)
