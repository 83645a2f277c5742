"""The trusted model, the page's parameters, a start on its bound, the callback's and the
monitor's inputs, and the run a report of a log of several runs reads."""

from __future__ import annotations

import html
import json
import sys

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.fit_text import shown_param, trusted_member
from grpodyn.ground import InputError

from .test_runs_cli import APPENDED


@pytest.fixture(scope="module")
def wandering(tmp_path_factory):
    """A random walk of 40 points: the forecaster puts its weight on the flat level."""
    rng = np.random.default_rng(3)
    reward = 0.3 + np.cumsum(0.03 * rng.standard_normal(40))
    path = tmp_path_factory.mktemp("walk") / "walk.jsonl"
    path.write_text("".join(json.dumps({"step": i + 1, "reward": float(v)}) + "\n"
                            for i, v in enumerate(reward)))
    return path


@pytest.fixture(scope="module")
def walk_analysis(wandering):
    from grpodyn.empirical.logs.loaders import load_run
    from grpodyn.empirical.logs.run_analysis import analyse_run

    return analyse_run(load_run(wandering), diagnose_run=False)


def test_the_trusted_model_is_the_member_that_carries_the_weight():
    """exponential, of weight 0, was named trusted when the level carried all the weight."""
    fitted = ("exponential", "power", "sigmoid")
    assert trusted_member({"level": 1.0, "exponential": 0.0, "power": 0.0}, fitted) is None
    assert trusted_member({"level": 0.2, "exponential": 0.1, "power": 0.7}, fitted) == "power"


def test_a_weight_on_the_level_trusts_no_curve(walk_analysis, wandering, capsys):
    analysis = walk_analysis
    assert max(analysis.weights, key=analysis.weights.get) not in analysis.fits
    assert analysis.trusted_model is None
    out = analysis.to_dict()
    assert out["best"] is None and out["weight_on"] not in out["models"]
    assert main(["fit", str(wandering)]) == 0
    printed = capsys.readouterr().out
    assert "no curve model is trusted" in printed and "the analysis trusts" not in printed
    page = html.unescape(analysis.html_section())
    assert "no curve model is trusted" in page
    top = out["weight_on"]
    assert f"<td>{top}</td><td>-</td><td>{analysis.weights[top]:.2f}</td>" in page
    assert f"{top:15s} weight {analysis.weights[top]:.2f}" in printed


def test_the_page_shows_each_parameter_as_the_terminal_does(walk_analysis):
    """The page printed tau=26.1 where the terminal said not determined (26+-2.3e+02)."""
    page = html.unescape(walk_analysis.html_section())
    shown = [shown_param(entry, k, v) for entry in
             (fit.to_dict() for fit in walk_analysis.fits.values())
             for k, v in entry["params"].items() if v is not None]
    assert any("not determined" in s or "(at bound)" in s for s in shown)
    for text in shown:
        assert text in page


def test_a_start_on_the_range_edge_is_reported_at_its_bound():
    """r0 = 0.0 on the [0, 1] range had at_bounds [] and printed r0=0+-0.047."""
    from grpodyn.numerics.fit import fit_curve

    t = np.arange(40.0)
    rng = np.random.default_rng(0)
    y = np.clip(0.7 - 0.8 * np.exp(-t / 5) + 0.03 * rng.standard_normal(40), 0, 1)
    for name in ("exponential", "sigmoid"):
        boxed = fit_curve(name, t, y, plateau_bounds=(0.0, 1.0))
        assert boxed.params["r0"] == 0.0
        entry = boxed.to_dict()
        assert "r0" in entry["at_bounds"] and "r0" in boxed.params_at_bounds
        assert "r0" not in boxed.at_bounds  # the plateau stays as determined as before
        assert shown_param(entry, "r0", 0.0) == "r0=0 (at bound)"
        assert not shown_param(entry, "r_star", boxed.params["r_star"]).endswith(
            "not determined")
        assert "(at bound)" in boxed.report().split("r0 =")[1].splitlines()[0]


def test_the_callback_takes_one_mode_as_a_string():
    pytest.importorskip("transformers")
    from grpodyn.empirical.callback import GRPODynamicsCallback

    callback = GRPODynamicsCallback(stop_on="dynamical_instability")
    assert callback.stop_on == ("dynamical_instability",)
    with pytest.raises(InputError, match="unknown modes \\['nope'\\]"):
        GRPODynamicsCallback(stop_on="nope")


def test_the_callback_without_transformers_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.delitem(sys.modules, "grpodyn.empirical.callback", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'grpodyn\[trl\]'") as info:
        import grpodyn.empirical.callback  # noqa: F401
    assert "\n" not in str(info.value)


def test_the_monitor_refuses_metrics_that_are_not_a_mapping():
    from grpodyn import Monitor

    with pytest.raises(InputError, match="^metrics: expected a mapping"):
        Monitor().update(3, None)
    with pytest.raises(InputError, match="^metrics: expected a mapping"):
        Monitor().update(3, [("reward", 0.5)])


@pytest.mark.parametrize("momentum", ["0.9", True, [0.9], 1.5, -0.1])
def test_the_monitor_refuses_a_momentum_that_is_not_a_number_in_0_1(momentum):
    from grpodyn import Monitor

    with pytest.raises(InputError, match="momentum"):
        Monitor(momentum=momentum)
    assert Monitor(momentum=np.float64(0.9)).momentum == 0.9


def test_the_report_of_a_log_of_several_runs_says_which_it_read(tmp_path, capsys):
    assert main(["report", str(APPENDED), "--out", str(tmp_path / "report")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"log: {APPENDED} [run3]"
    assert lines[1].startswith("note: 3 runs in this log (")


@pytest.mark.parametrize("step", ["1", None, float("nan"), True])
def test_the_monitor_refuses_a_step_that_is_not_a_number(step):
    """A step given as a string was dropped without a word; now the step is named."""
    import grpodyn

    with pytest.raises(InputError, match="step: expected a finite number"):
        grpodyn.Monitor().update(step, {"reward": 0.5})
