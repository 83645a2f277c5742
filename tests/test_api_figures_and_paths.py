"""The Python API as a notebook uses it: figures, arrays, names and paths.

Each case reached a wrong result or a bare traceback: a figure saved over the log it was drawn
from, an empty file for a path without a suffix, a TypeError for a one-element array, a
trajectory whose columns differ in length, one model name split into letters, a transfer to an
empty target, a path that is a number, a JSON-lines log read as a console log by its suffix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.ground import InputError

REAL = Path(__file__).parent / "data" / "real_logs"
JSONL = REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
                "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")


@pytest.fixture
def analysis(tmp_path):
    log = tmp_path / "runlog.svg"  # a JSON-lines log whose name ends like an image
    shutil.copy(JSONL, log)
    return grpodyn.analyse_run(grpodyn.load_run(log)), log


def test_a_figure_is_not_saved_over_its_own_log(analysis):
    result, log = analysis
    before = log.read_bytes()
    with pytest.raises(InputError, match="refusing to overwrite it"):
        result.plot(path=log)
    assert log.read_bytes() == before


def test_a_figure_path_without_a_format_suffix_is_refused(analysis, tmp_path):
    result, _ = analysis
    for name in ("figure", "figure.xyz"):
        with pytest.raises(InputError, match="format comes from its suffix"):
            result.plot(path=tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runlog.svg"]
    result.plot(path=tmp_path / "figure.png")
    assert (tmp_path / "figure.png").stat().st_size > 0


@pytest.mark.parametrize("given", [{"noise": [1e-4]}, {"momentum": np.array([0.9])},
                                   {"stiffness": (0.01, 0.02)}])
def test_an_array_where_a_number_is_asked_names_the_input(given):
    args = {"momentum": 0.9, "stiffness": 0.01, "noise": 1e-4, **given}
    with pytest.raises(InputError, match=f"{next(iter(given))} must be a number"):
        grpodyn.stationary_variance(**args)


def test_a_trajectory_needs_one_value_per_step():
    with pytest.raises(InputError, match="values must have one value per step"):
        grpodyn.Trajectory(steps=np.arange(5), values=np.arange(3))
    with pytest.raises(InputError, match="upper must have one value per step"):
        grpodyn.Trajectory(steps=np.arange(3), values=np.zeros(3), lower=np.zeros(3),
                           upper=np.zeros(2))


def test_an_unstable_trajectory_says_so_once():
    path = grpodyn.Trajectory(steps=np.arange(3.0), values=np.array([0.0, 1.0, 3.0]),
                              regime="unstable", unstable=True)
    assert repr(path).count("unstable") == 1


def test_one_model_name_is_one_model():
    from grpodyn.numerics.fit import fit_models

    t = np.arange(60.0)
    y = 0.2 + 0.6 * (1 - np.exp(-t / 15)) + np.random.default_rng(0).normal(0, 0.01, t.size)
    assert list(fit_models(t, y, models="exponential")) == ["exponential"]


def test_a_transfer_to_an_empty_target_is_refused():
    from grpodyn.empirical.logs.sweep_transfer import transfer

    with pytest.raises(InputError, match="target \\(--to\\) is empty"):
        transfer([str(JSONL)], {})


@pytest.mark.parametrize("path", [123, None, b"metrics.jsonl"])
def test_a_path_that_is_not_a_path_is_refused(path):
    with pytest.raises(LogFormatError, match="path must be a log's path"):
        grpodyn.load_run(path)


def test_json_lines_named_log_are_read_as_json_lines(tmp_path):
    """As a console log it lost the entropy and the KL, and took an eval row for training."""
    copy = tmp_path / "metrics.log"
    shutil.copy(JSONL, copy)
    by_text, by_suffix = grpodyn.load_run(copy), grpodyn.load_run(JSONL)
    assert by_text.format == by_suffix.format == "jsonl"
    assert by_text.n_points == by_suffix.n_points and set(by_text.metrics) == set(
        by_suffix.metrics)


def test_a_job_stream_of_json_lines_wrapping_a_console_is_read_as_the_console(tmp_path):
    """Lines that are JSON objects but hold no reward (a job's stream of console text) fall
    back to the console reading, as before the text decided the format."""
    import json

    stream = tmp_path / "job.log"
    stream.write_text("".join(json.dumps(
        {"stream_name": "stdout", "time": float(i),
         "data": f"step:{i} - critic/score/mean:{0.1 + 0.01 * i:.3f} - actor/entropy:0.5\n"})
        + "\n" for i in range(1, 41)))
    run = grpodyn.load_run(stream)
    assert run.format == "verl_console" and run.n_points == 40
    assert run.reward[-1] == pytest.approx(0.5)
    assert any("not JSON-lines records (no step field" in w for w in run.warnings)


def test_a_folder_of_text_logs_some_json_lines_some_not_is_read_as_consoles(tmp_path):
    """A run that crashed printed its traceback after its JSON lines: the folder's two runs
    were of two formats and refused; they are read as the console logs they both are."""
    import json

    def rows(n: int) -> str:
        return "".join(json.dumps({"step": i, "reward": 0.1 + 0.001 * i}) + "\n"
                       for i in range(1, n + 1))

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "run0.log").write_text(rows(80))
    (folder / "run1.log").write_text(rows(50) + "Traceback (most recent call last):\n"
                                     "RuntimeError: out of memory\n")
    from grpodyn.empirical.logs.loaders import load_runs

    runs = load_runs(folder)
    assert [(r.run_name, r.n_points) for r in runs] == [("run0", 80), ("run1", 50)]
    assert len({r.format for r in runs}) == 1


def test_a_map_keeps_plain_floats_and_a_monitor_says_when_it_diagnosed():
    system = grpodyn.MeanFieldMap(lr=np.float32(0.5), kappa=np.float64(1.0), optimizer="sgd",
                                  momentum=0.9)
    assert type(system.lr) is float and type(system.kappa) is float
    assert "np." not in repr(system)
    monitor = grpodyn.Monitor(momentum=0.9, diagnose_every=40)
    rng = np.random.default_rng(0)
    for step in range(1, 61):
        monitor.update(step, {"reward": 0.2 + 0.5 * (1 - np.exp(-step / 15))
                              + rng.normal(0, 0.02)})
    assert "(diagnosed at step 40)" in repr(monitor)
    assert "(diagnosed at step 40)" in repr(monitor.state)


def test_a_folder_of_two_formats_names_each_files_format(tmp_path):
    (tmp_path / "a.csv").write_text("step,reward\n" + "".join(f"{i},0.{i}\n" for i in range(1, 9)))
    shutil.copy(JSONL, tmp_path / "b.jsonl")
    with pytest.raises(LogFormatError, match=r"of several formats \(a.csv: table; b.jsonl: "
                                             r"jsonl\): give one of them"):
        grpodyn.load_run(tmp_path)
