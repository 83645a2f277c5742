"""Corrupt values inside a log or among the arguments: refused or set aside with a note.

One step number written 4000 among steps 39 and 41 had reversed the diagnosis and the advice;
negative steps had reversed a run in time; a logged learning rate of 1e300 gave "determined"
advice; a noise whose stationary variance overflows read as an unstable map.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from grpodyn import analyse_run
from grpodyn.cli import main
from grpodyn.empirical.logs.common import stray_steps
from grpodyn.empirical.logs.loaders import LogFormatError, load_run
from grpodyn.ground import InputError
from grpodyn.numerics.fluctuations import stationary_variance


def _log(path, steps, rewards, **columns):
    rows = [{"step": s, "reward": r, **{k: v[i] for k, v in columns.items()}}
            for i, (s, r) in enumerate(zip(steps, rewards, strict=True))]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _rising(n=80):
    t = np.arange(1, n + 1)
    noise = 0.01 * np.random.default_rng(3).normal(size=n)
    return t, 0.3 + 0.5 * (1 - np.exp(-t / 40)) + noise


def test_one_step_far_out_of_place_is_dropped_with_a_note(tmp_path):
    t, r = _rising()
    steps = t.astype(float).copy()
    steps[39] = 4000.0
    run = load_run(_log(tmp_path / "jump.jsonl", steps.tolist(), r.tolist()))
    assert run.steps[-1] == 80 and run.n_points == 79
    assert any("1 record(s) with a corrupt step number dropped (4000)" in w for w in run.warnings)


_SHUFFLED = np.random.default_rng(0).permutation(200).tolist()


@pytest.mark.parametrize("steps,stray", [
    ([1, 2, 4000, 4, 5], [2]),                                    # far above the rest
    ([1, 2, 3, -7, 5, 6], [3]),                                   # negative
    ([1, 2, 4, 3, 5, 6], []),                                     # a swapped pair: sorted
    ([1, 2, 3, 1, 2, 3], []),                                     # a restarted counter
    ([5000, 1, 2, 3, 4], [0]),                                    # a first record far above
    ([*range(40), 4000, 4001, *range(41, 80)], [40, 41]),         # two together
    ([*range(80), 4000, 3], [80]),                                # not the 3 after it
    ([*range(50), *range(200, 210), 49, *range(210, 250)], []),   # late, inside the span
    ([*range(100, 200), 3, *range(200, 210)], [100]),             # far below, out of order
    ([*range(80), 4000], []),                                     # last, in the file's order
    (_SHUFFLED, []),                                              # a shuffled log: sorted
    ([s for s in range(100) for _ in (0, 1)], []),                # two runs interleaved
    ([1, 1000, 2, 3], [1]),                                       # a short log: the stray only
    ([1, 2, 1000, 3], [2]),
    ([1, 2, 1000, 1001, 3], [2, 3]),
])
def test_stray_steps(steps, stray):
    assert list(np.flatnonzero(stray_steps(np.asarray(steps, dtype=float)))) == stray


def test_a_log_of_negative_steps_is_refused(tmp_path):
    t, r = _rising()
    with pytest.raises(LogFormatError, match="negative or corrupt"):
        load_run(_log(tmp_path / "neg.jsonl", (-t).tolist(), r.tolist()))


def test_a_learning_rate_beyond_any_lr_is_no_lr(tmp_path, capsys):
    t, r = _rising()
    path = _log(tmp_path / "lr.jsonl", t.tolist(), r.tolist(), learning_rate=[1e300] * t.size)
    run = load_run(path)
    assert run.meta.lr is None
    assert any("logged as 1e+300 at its highest (beyond any learning rate" in w
               for w in run.warnings)
    assert main(["advise", "--log", str(path), "--lr", "1e300"]) == 2
    assert "a learning rate is at most 1e+06" in capsys.readouterr().err


@pytest.mark.parametrize("value,why", [(-1e-6, "(negative: no learning rate is)"),
                                       (0.0, "(rounded away in the printout?)")])
def test_a_learning_rate_never_positive_says_why(tmp_path, value, why):
    t, r = _rising()
    run = load_run(_log(tmp_path / "lr.jsonl", t.tolist(), r.tolist(),
                        learning_rate=[value] * t.size))
    assert run.meta.lr is None
    assert any(f"at its highest {why}" in w for w in run.warnings), run.warnings


def test_a_metric_never_finite_is_noted(tmp_path):
    t, r = _rising()
    run = load_run(_log(tmp_path / "nan.jsonl", t.tolist(), r.tolist(),
                        learning_rate=[math.nan] * t.size))
    assert "learning_rate" not in run.metrics
    assert any("learning_rate is logged but never as a finite number" in w
               for w in run.warnings)


@pytest.mark.parametrize("bounds", ["0,1", (0,), (0, 1, 2), (None, 1), 5, (1, 0)])
def test_a_malformed_reward_range_is_named(tmp_path, bounds):
    t, r = _rising()
    with pytest.raises(InputError, match="^reward_range: expected"):
        analyse_run(str(_log(tmp_path / "ok.jsonl", t.tolist(), r.tolist())),
                    reward_range=bounds)


def test_a_variance_beyond_a_double_is_refused_not_called_unstable(capsys):
    with pytest.raises(InputError, match="exceeds what a double holds"):
        stationary_variance(momentum=0.9, stiffness=0.01, noise=1e308)
    assert math.isinf(stationary_variance(momentum=0.9, stiffness=5.0, noise=1.0))  # unstable
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                 "--noise", "1e306"]) == 2
    assert "noise" in capsys.readouterr().err


def test_a_forecast_of_records_merged_on_one_step_says_where_the_points_went(tmp_path, capsys):
    t, r = _rising()
    path = _log(tmp_path / "lr_steps.jsonl", t.tolist(), r.tolist(), lr=[1e-6] * t.size)
    assert main(["forecast", str(path), "--train-fraction", "0.5", "--step-key", "lr"]) == 2
    err = capsys.readouterr().err
    assert "the cut leaves 0 training points" in err and "80 records shared 1 distinct step" in err
