"""``grpodyn bandit`` says what each experiment ran and measured.

The configuration printed (and in the JSON) is the one each experiment ran; kappa (the curvature
scale) and the stiffness k = lr x kappa carry their own names; a lag threshold is labelled as
the first unstable lag, one past the largest stable lag that ``grpodyn predict`` reports; a
simulated run has a one-line repr; lists print as short lines; ``--write-log`` refuses an
``--experiment`` it would not run.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from grpodyn.cli import main
from grpodyn.empirical.bandit import lab
from grpodyn.empirical.bandit.simulation import BanditConfig, simulate_bandit
from grpodyn.numerics.predict import predict

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def _run(*argv: str) -> tuple[dict, str]:
    """The JSON and the text output of ``grpodyn bandit ARGV --serial`` (run once each)."""
    import contextlib
    import io

    outputs = []
    for extra in (["--json"], []):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(["bandit", *argv, "--serial", *extra]) == 0
        outputs.append(buffer.getvalue())
    return json.loads(outputs[0]), outputs[1]


def _section(text: str, name: str) -> str:
    """The lines of one experiment's block of the text output."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(name))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")),
               len(lines))
    return "\n".join(lines[start:end])


def test_a_threshold_experiment_shows_the_config_it_ran():
    out, text = _run("--experiment", "refresh", "--momenta", "0.9")
    config = out["configs"]["refresh"]
    assert (config["lr"], config["group_size"], config["prompts"]) == (0.4, 64, 128)
    assert "momentum" not in config and "refresh" not in config  # swept: one row each
    assert [r["momentum"] for r in out["refresh"]] == [0.9]
    assert "config" not in out  # no configuration that no experiment ran
    block = _section(text, "refresh")
    assert "lr 0.4" in block and "group_size 64" in block and "prompts 128" in block
    assert "lr 0.1" not in text and "momentum 0," not in text


def test_the_group_and_trajectory_experiments_show_their_own_config():
    out, text = _run("--experiment", "group")
    assert (out["configs"]["group"]["kl"], out["configs"]["group"]["kl_estimator"]) \
        == (1.3, "forward")
    assert "kl 1.3" in text and "kl_estimator forward" in text and "kl 0.5" not in text
    out, text = _run("--experiment", "trajectory")
    assert out["configs"]["trajectory"]["momentum"] == out["trajectory"]["momentum"] == 0.8
    assert "momentum 0.8" in _section(text, "trajectory") and "momentum 0," not in text


def test_the_group_experiment_runs_the_kl_it_is_given():
    out, _ = _run("--experiment", "group", "--kl", "0.8")
    assert out["configs"]["group"]["kl"] == 0.8
    default, _ = _run("--experiment", "group")
    assert out["group"]["p_star"] != default["group"]["p_star"]


def test_kappa_and_the_stiffness_are_named_apart():
    out, text = _run("--experiment", "stiffness")
    s = out["stiffness"]
    assert s["kappa"] == s["analytic"]
    assert s["stiffness"] == pytest.approx(0.1 * s["kappa"])
    out_t, text_t = _run("--experiment", "transition")
    t = out_t["transition"]
    assert t["kappa"] == pytest.approx(t["stiffness"] / 0.1)
    assert t["kappa"] == pytest.approx(s["kappa"])
    assert f"kappa {s['kappa']:.6g}" in text and f"stiffness k {s['stiffness']:.6g}" in text
    assert f"stiffness k {t['stiffness']:.6g}" in text_t and f"kappa {t['kappa']:.6g}" in text_t
    assert "stiffness: analytic" not in text  # kappa is not called the stiffness


@pytest.mark.parametrize("kind,limit", [("refresh", "refresh_max"),
                                        ("staleness", "staleness_max")])
def test_thresholds_say_first_unstable_and_give_the_largest_stable(kind, limit):
    out, text = _run("--experiment", kind, "--momenta", "0.9")
    row = out[kind][0]
    k = row["stiffness"]
    largest = getattr(predict(lr=k, momentum=0.9, kappa=1.0), limit)
    assert row["predicted"] == largest + 1  # the first unstable lag
    assert row["predicted_largest_stable"] == largest
    block = _section(text, kind)
    assert "first unstable" in block and "largest stable" in block


def test_notebook_03_calls_its_numbers_what_they_are():
    """Its text names the first unstable K that ``refresh_threshold_comparison`` prints."""
    import importlib.util

    nbformat = pytest.importorskip("nbformat")
    spec = importlib.util.spec_from_file_location("make_notebooks",
                                                  ROOT / "notebooks" / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    name = "03_stability_and_refresh.ipynb"
    cells = module.NOTEBOOKS[name]
    intro = cells[0][1]
    assert "largest stable refresh interval" not in intro
    assert "first unstable refresh interval K" in intro
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    assert [(c.cell_type, c.source) for c in notebook.cells] == \
        [("markdown" if kind == "md" else "code", src) for kind, src in cells]


def test_a_simulated_run_has_a_one_line_repr():
    run = simulate_bandit(BanditConfig(), steps=300, seeds=4)
    text = repr(run)
    assert "\n" not in text and len(text) < 200, text
    assert text.startswith("BanditRun(") and "300 recorded steps" in text and "4 seeds" in text
    assert len(repr(lab.THRESHOLD_CONFIG)) < 120


def test_lists_print_as_short_lines():
    _, text = _run("--experiment", "transition")
    assert max(len(line) for line in text.splitlines()) <= 110
    assert "61 momenta" in text
    _, text = _run("--experiment", "refresh", "--momenta", "0.9")
    assert "[{" not in text and "{'" not in text
    assert max(len(line) for line in text.splitlines()) <= 110


def test_write_log_refuses_an_experiment(tmp_path, capsys):
    path = tmp_path / "trainer_state.json"
    assert main(["bandit", "--write-log", str(path), "--experiment", "refresh"]) == 2
    err = capsys.readouterr().err
    assert "--experiment" in err and "--write-log" in err and err.count("\n") == 1
    assert not path.exists()


def test_the_exported_trajectory_says_it_is_the_overdamped_form():
    from grpodyn.numerics import _generated

    summary = _generated.trajectory.__doc__.splitlines()[0]
    assert "zeta > 1" in summary and "grpodyn.trajectory" in summary
    assert "unified through critical damping" not in summary


def test_the_docs_say_export_needs_sympy():
    readme = (ROOT / "README.md").read_text()
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert "export needs sympy" in readme and "forecasts, export" not in readme
    assert "forecasts, export." not in architecture and "need sympy" in architecture


def test_write_log_keeps_a_file_that_appears_while_the_run_is_simulated(tmp_path, capsys,
                                                                         monkeypatch):
    """The target was checked, then replaced: a file made between the two was lost."""
    from grpodyn.empirical.bandit import simulation

    path = tmp_path / "trainer_state.json"

    def simulate_while_another_writes(*args, **kwargs):
        path.write_text("another process's log")
        return simulate_bandit(*args, **kwargs)

    monkeypatch.setattr(simulation, "simulate_bandit", simulate_while_another_writes)
    assert main(["bandit", "--write-log", str(path), "--steps", "20"]) == 2
    err = capsys.readouterr().err
    assert "exists; refusing to overwrite it" in err and err.count("\n") == 1
    assert path.read_text() == "another process's log"
    assert [p.name for p in tmp_path.iterdir()] == ["trainer_state.json"]
