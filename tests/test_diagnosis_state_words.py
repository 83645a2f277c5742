"""A rise that turns at the end, modes the log cannot judge, and the report of a short log.

Small seeded inputs: each case is one the diagnosis once got wrong in its words or its state.
"""

from __future__ import annotations

import json

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.early_warning import prefix
from grpodyn.empirical.logs.loaders import Run, load_run


def _turning_run(seed: int = 0) -> Run:
    """A reward that rises for 170 of 200 steps and falls over the last 30, with noise 0.01."""
    t = np.arange(1, 201, dtype=float)
    curve = np.where(t <= 170, 0.2 + 0.4 * t / 170, 0.6 - 0.2 * (t - 170) / 30)
    rng = np.random.default_rng(seed)
    return Run("turning", "test", t, curve + rng.normal(0, 0.01, t.size), {})


def test_a_rise_that_falls_over_its_last_quarter_is_declining_not_learning() -> None:
    d = diagnose(_turning_run())
    assert d.state == "declining", d.state_evidence
    assert "over the last quarter it fell" in d.state_evidence
    assert 150 <= d.peak_step <= 185
    assert not d.healthy


def test_a_steady_rise_is_still_learning() -> None:
    t = np.arange(1, 201, dtype=float)
    rng = np.random.default_rng(1)
    d = diagnose(Run("rising", "test", t, 0.2 + 0.002 * t + rng.normal(0, 0.01, t.size), {}))
    assert d.state == "learning"


def test_a_mode_the_log_cannot_judge_has_no_score_in_json() -> None:
    modes = diagnose(_turning_run()).to_dict()["modes"]
    hacking = modes["reward_hacking"]
    assert hacking["judged"] is False and hacking["score"] is None
    assert all(isinstance(v["score"], float) for v in modes.values() if v["judged"])


def test_three_held_out_points_are_named_as_too_few_not_as_missing() -> None:
    t = np.arange(1, 101, dtype=float)
    held = np.full(t.size, np.nan)
    held[[20, 50, 80]] = [0.3, 0.4, 0.5]
    rng = np.random.default_rng(2)
    run = Run("held", "test", t, 0.2 + 0.004 * t + rng.normal(0, 0.01, t.size),
              {"heldout_reward": held})
    evidence = diagnose(run).modes["reward_hacking"].evidence
    assert evidence.startswith("only 3 held-out reward points in the log (4 needed)")


def test_the_report_of_a_log_too_short_to_forecast_says_there_is_no_forecast(tmp_path) -> None:
    from grpodyn.run_report import write_run_report

    rng = np.random.default_rng(3)
    history = [{"step": s, "reward": float(0.2 + 0.02 * s + 0.01 * rng.normal())}
               for s in range(1, 25)]
    log = tmp_path / "trainer_state.json"
    log.write_text(json.dumps({"log_history": history}))
    write_run_report(load_run(log), tmp_path / "out")
    page = next((tmp_path / "out").glob("*.html")).read_text()
    assert "points are fewer than the 30 a forecast from the first 70% needs" in page
    assert "24 points" in page and "no forecast" in page
    assert "the forecast after the training cut" not in page


def test_a_collapse_in_the_last_quarter_is_declining_from_its_own_peak() -> None:
    """A run that rises to 0.69 and sits at 0 from step 300, read up to steps 302-400.

    The fall is tested from the best window before the last quarter; the peak it reports is the
    run's own (the best window mean, on the plateau of steps 240-300 before the collapse), not
    that earlier window (steps 218-220 at 310-320 when it was reported).
    """
    rng = np.random.default_rng(0)
    t = np.arange(500)
    reward = np.clip(np.where(t < 300, 0.2 + 0.5 * (1 - np.exp(-t / 80))
                              + rng.normal(0, 0.02, 500), 0.0), 0, 1)
    run = Run("collapse", "test", t + 1.0, reward, {})
    for until in (302, 310, 320, 360, 400):
        found = diagnose(prefix(run, float(until)))
        assert found.state == "declining", until
        assert 240 <= found.peak_step <= 300, (until, found.peak_step)


def test_the_peak_without_a_tested_window_is_the_runs_own() -> None:
    """A best window at the very end, no tested window: a step, never NaN."""
    from grpodyn.empirical.diagnostics.state import _top

    t = np.arange(1.0, 101)
    run = Run("end", "test", t, t / 100, {})
    step, words = _top(run, 10, float("nan"))
    assert step == 96.0 and words == ""


def test_a_change_too_small_for_three_decimals_keeps_two_significant_digits():
    """'fell 0.000' on public runs whose last quarter moved by 4e-4: the number says how much."""
    from grpodyn.empirical.diagnostics.series import change_words

    assert change_words(-0.00031) == "fell 0.00031"
    assert change_words(4e-7) == "rose 4.0e-07"  # two significant digits
    assert change_words(0.12) == "rose 0.120" and change_words(-0.05) == "fell 0.050"
    assert change_words(0.0) == "did not change"


def test_a_flat_reading_of_a_few_points_says_how_wide_its_bound_is():
    """Three points: +0.15 against a standard error of 0.025 is 'flat' under Student's t with
    one degree of freedom (12.7 s.e.); the words say so instead of reading as a contradiction."""
    import numpy as np

    from grpodyn.empirical.logs.trend import run_trend

    trend = run_trend(np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.3, 0.35]))
    assert trend.kind == "flat"
    assert "within the 12.7 standard errors that a noise read from 3 points (1 degree of " \
        "freedom) allows" in trend.text
