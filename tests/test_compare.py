"""``grpodyn compare``: several runs in one table and one figure, on the step or lr clock."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main

DATA = Path(__file__).parents[1] / "empirical" / "data"
GRID = Path(__file__).parents[1] / "studies" / "tiny_grids" / "data" / "tiny_grid"
SEEDS = [str(DATA / "tiny_runs" / f"tiny_G4_seed{seed}.json") for seed in range(3)]
APPENDED = (Path(__file__).parent / "data" / "formats"
            / "jorahn__rookworld-rlvr__src_mini_logs_training_history.excerpt.jsonl")
STATUSES = {"determined", "singular", "not_determined", "at_bound"}


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def seeds_result():
    """The three G = 4 seeds of the shipped tiny runs, compared once (JSON)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["compare", *SEEDS, "--json"]) == 0
    return json.loads(buffer.getvalue())


def test_compare_seeds_json_contract(seeds_result):
    result = seeds_result
    assert result["clock"] == "step"
    assert [r["name"] for r in result["runs"]] == ["tiny_G4_seed0", "tiny_G4_seed1",
                                                   "tiny_G4_seed2"]
    for run, path in zip(result["runs"], SEEDS, strict=True):
        assert {"name", "source", "steps", "n_points", "final_reward", "plateau", "tau",
                "diagnosis"} <= set(run)
        assert run["source"] == path and run["steps"] == 1500.0
        assert run["plateau"]["status"] in STATUSES and run["tau"]["status"] in STATUSES
        # a number the data do not determine has no value, but a reason
        for entry in (run["plateau"], run["tau"]):
            if entry["status"] == "not_determined":
                assert entry["value"] is None and entry["reason"]
            if entry["status"] == "determined":
                assert entry["value"] is not None
        assert run["diagnosis"]["state"]
        final = run["final_reward"]
        assert final["points"] == 150 and 0 <= final["value"] <= 1


def test_compare_on_the_lr_clock_scales_by_the_learning_rate(capsys):
    """Constant learning rates 3e-4 and 1.2e-3 over 240 steps: clocks end at lr x 240."""
    if not GRID.is_dir():
        pytest.skip("the tiny grid lives in the repository's studies/ folder, absent here")
    runs = [str(GRID / "adam_lr0.0003_G4_B8_seed0.json"),
            str(GRID / "adam_lr0.0012_G4_B8_seed0.json")]
    result = _json(capsys, ["compare", *runs, "--clock", "lr"])
    assert result["clock"] == "lr"
    ends = [r["clock_end"] for r in result["runs"]]
    assert ends == pytest.approx([0.0003 * 240, 0.0012 * 240])
    steps = _json(capsys, ["compare", runs[0]])
    assert steps["runs"][0]["clock_end"] == 240.0


def test_lr_clock_integrates_a_logged_schedule():
    from grpodyn.empirical.logs.compare import lr_clock
    from grpodyn.empirical.logs.loaders import Run

    steps = np.arange(1.0, 101.0)
    lr = 1e-3 * (1 - steps / 100)  # linear decay, logged at every step
    run = Run(source="x", format="custom", steps=steps, reward=np.linspace(0, 1, 100),
              metrics={"learning_rate": lr})
    clock = lr_clock(run, name="x")
    exact = 1e-3 * (steps - steps**2 / 200)  # integral of the schedule from step 0
    assert clock == pytest.approx(exact, rel=1e-2, abs=2e-6)
    assert np.all(np.diff(clock) > 0)


def test_compare_the_runs_of_one_file(capsys):
    result = _json(capsys, ["compare", str(APPENDED)])
    assert [r["name"] for r in result["runs"]] == ["run1", "run2", "run3"]
    short = result["runs"][0]  # three points: said, not analysed, the others go on
    assert short["plateau"]["status"] == "not_determined"
    assert short["plateau"]["reason"].startswith("not analysed")
    assert result["runs"][2]["n_points"] == 25
    one = _json(capsys, ["compare", str(APPENDED), "--run", "run3"])
    assert [r["name"] for r in one["runs"]] == ["run3"]


def test_compare_writes_the_figure_and_a_table(tmp_path, capsys):
    fig = tmp_path / "compare.png"
    assert main(["compare", *SEEDS[:2], "--out", str(fig)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 runs on the step clock") and "tiny_G4_seed1" in out
    assert fig.stat().st_size > 10_000 and fig.read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob(".*.tmp*"))  # no temporary file left behind


@pytest.mark.parametrize("argv,needle", [
    (["compare", SEEDS[0], "--clock", "wall"], "--clock"),
    (["compare", SEEDS[0], "--out", SEEDS[0]], "refusing to overwrite"),
    (["compare", SEEDS[0], "--out", "/no/such/folder/x.png"], "--out"),
    (["compare", SEEDS[0], "--out", "figure.txt"], ".png, .pdf or .svg"),
    (["compare", "/no/such/log.json"], "/no/such/log.json"),
])
def test_compare_bad_input_is_one_line_exit_2(capsys, argv, needle):
    before = Path(SEEDS[0]).read_bytes()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    assert Path(SEEDS[0]).read_bytes() == before


def test_a_log_after_an_option_is_one_more_log(capsys):
    result = _json(capsys, ["compare", SEEDS[0], "--momentum", "0.9", SEEDS[1]])
    assert [run["source"] for run in result["runs"]] == SEEDS[:2]


def test_an_unknown_option_among_the_logs_is_still_refused(capsys):
    assert main(["compare", SEEDS[0], "--bogus", SEEDS[1]]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --bogus" in err and err.count("\n") == 1


def test_compare_lr_clock_without_a_learning_rate(tmp_path, capsys):
    log = tmp_path / "no_lr.csv"
    log.write_text("step,reward\n" + "".join(f"{i},{0.1 + 0.005 * i}\n" for i in range(1, 41)))
    assert main(["compare", str(log), "--clock", "lr"]) == 2
    assert "no learning rate" in capsys.readouterr().err
    assert main(["compare", str(log), "--clock", "lr", "--lr", "1e-3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["clock_end"] == pytest.approx(0.04)


def test_a_log_given_twice_is_refused(capsys, tmp_path) -> None:
    """The same runs twice would read as two runs that agree; by another path too."""
    assert main(["compare", SEEDS[0], SEEDS[0]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "given twice" in err
    link = tmp_path / "again.json"
    link.symlink_to(Path(SEEDS[0]).resolve())
    assert main(["compare", SEEDS[0], str(link)]) == 2
    assert "(the same file as" in capsys.readouterr().err
