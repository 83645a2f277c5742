"""One reward far beyond all the others is named, not silently averaged into every verdict.

A rise from 0.3 to 0.7 with a single logged 1000 read as "not learning ... flat from the start"
with no word on the spike; the loader now names it, and every command shows the note.
"""

from __future__ import annotations

import json

import numpy as np

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import lone_extremes


def _rise(n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    steps = np.arange(1.0, n + 1)
    reward = 0.3 + 0.4 * (1 - np.exp(-steps / 20)) + np.random.default_rng(5).normal(0, 0.02, n)
    return steps, reward


def test_a_lone_spike_is_named_with_its_step_and_value():
    steps, reward = _rise()
    reward[40] = 1000.0
    (note,) = lone_extremes(steps, reward)
    assert note.startswith("the reward at step 41, 1000, lies ") and "check the log" in note
    reward[40] = -1000.0
    (note,) = lone_extremes(steps, reward)
    assert note.startswith("the reward at step 41, -1000, lies ")


def test_an_ordinary_run_and_a_collapse_have_no_note():
    steps, reward = _rise()
    assert lone_extremes(steps, reward) == []
    fall = np.where(steps < 50, reward, 0.01)  # a collapse: many points, not one
    assert lone_extremes(steps, fall) == []
    assert lone_extremes(steps[:9], np.r_[reward[:8], 1000.0]) == []  # under 10 points


def test_diagnose_shows_the_note(tmp_path, capsys):
    steps, reward = _rise()
    reward[40] = 1000.0
    path = tmp_path / "spike.jsonl"
    path.write_text("".join(json.dumps({"step": int(s), "reward": float(r)}) + "\n"
                            for s, r in zip(steps, reward, strict=True)))
    assert main(["diagnose", str(path)]) == 0
    assert "the reward at step 41, 1000, lies" in capsys.readouterr().out
