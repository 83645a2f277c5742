"""What a sweep tells the advice: the lowest lr at which a run of it fell bounds the limit.

Seeded synthetic runs: rises that held, rises given back, a collapse. The bound is the lowest
lr that fell above every lr that held (a fall below a run that held was not the lr's); the
advice stays under the margin target of it, and a run that held below it is never lowered for
it.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.sweep_advice import (
    cap_at_fall,
    exponent_from_sweep,
    fall_limit,
    run_optimizer,
    sweep_cap,
    sweep_falls,
)
from grpodyn.empirical.logs.sweep_runs import SweepRun

STEPS = np.arange(120.0)


def _rise(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 0.8 - 0.6 * np.exp(-STEPS / 20) + 0.01 * rng.standard_normal(STEPS.size)


def _fall(seed: int) -> np.ndarray:
    """A rise to 0.6 by step 30, then a collapse to 0.05."""
    rng = np.random.default_rng(seed)
    path = np.where(STEPS < 30, 0.2 + 0.4 * STEPS / 30, 0.05 + 0.55 * np.exp(-(STEPS - 30) / 8))
    return path + 0.01 * rng.standard_normal(STEPS.size)


def _sweep(*runs: tuple[float, np.ndarray, int], epochs: int = 1) -> SimpleNamespace:
    return SimpleNamespace(runs=[
        SweepRun(f"lr {lr:g} G {g}", STEPS, reward, {"optimizer": "adam", "lr": lr,
                                                     "group_size": g, "batch": 8,
                                                     "num_iterations": epochs})
        for lr, reward, g in runs])


def test_lowest_fall_above_every_hold():
    sweep = _sweep((1e-5, _rise(1), 8), (2e-5, _rise(2), 8), (4e-5, _fall(3), 8),
                   (8e-5, _fall(4), 8), (1e-6, _fall(5), 16))
    limit = fall_limit(sweep.runs, optimizer="adam", settings={"group_size": 8, "batch": 8})
    assert limit["lr"] == 4e-5 and limit["highest_held"] == 2e-5
    assert limit["compared"] == 4  # the G 16 run is another setting
    assert "lr_max <= 4e-05" in limit["reason"]
    assert fall_limit(sweep.runs, optimizer="sgd")["lr"] is None  # no run of that optimizer


def test_a_fall_below_a_run_that_held_bounds_nothing():
    sweep = _sweep((1e-5, _fall(1), 8), (2e-5, _rise(2), 8))
    limit = fall_limit(sweep.runs, optimizer="adam")
    assert limit["lr"] is None and "not the lr's" in limit["reason"]
    # the advised run held above the sweep's only fall: that fall is not the lr's either
    limit = fall_limit(_sweep((1e-5, _fall(1), 8)).runs, optimizer="adam",
                       own=(3e-5, STEPS, _rise(9)))
    assert limit["lr"] is None and limit["own_fell"] is False
    assert "none of the 1" in fall_limit(_sweep((1e-5, _rise(1), 8)).runs,
                                         optimizer="adam")["reason"]


def test_the_advised_run_given_again_is_read_once():
    sweep = _sweep((1e-5, _rise(1), 8), (4e-5, _fall(2), 8))
    limit = fall_limit(sweep.runs, optimizer="adam", own=(4e-5, STEPS, _fall(2)))
    assert limit["compared"] == 2 and limit["own_fell"] and limit["lr"] == 4e-5
    assert limit["run"] == "the advised run"


def test_falls_at_another_lag_are_not_compared():
    """Runs that fell at 8 updates per batch say nothing of the limit at 2 (the lag lowers it)."""
    sweep = _sweep((4e-5, _fall(1), 8), (4e-5, _fall(2), 8), epochs=8)
    sweep.runs += _sweep((4e-5, _rise(3), 8), epochs=2).runs
    limit = fall_limit(sweep.runs, optimizer="adam", settings={"num_iterations": 2},
                       own=(4e-5, STEPS, _rise(7)))
    assert limit["lr"] is None and limit["compared"] == 2
    assert "none of the 2 runs at these settings fell" in limit["reason"]
    assert "not compared" in limit["reason"] and "(num_iterations 8)" in limit["reason"]
    assert fall_limit(sweep.runs, optimizer="adam",
                      settings={"num_iterations": 8})["lr"] == 4e-5


def test_no_fall_is_compared_across_optimizers():
    """A run whose optimizer is not the sweep's, or unknown, is not capped by the sweep's falls;
    a TRL log's optimizer is its trainer's AdamW."""
    sweep = _sweep((1e-5, _rise(1), 8), (2e-5, _fall(2), 8))
    sweep.layout = SimpleNamespace(optimizers=["adam"])
    advice = ("raise", 2.0, [2.0, None])
    for optimizer, fmt, capped in (("sgd", "jsonl", False), (None, "jsonl", False),
                                   (None, "trl_trainer_state", True), ("adamw", "csv", True)):
        run = SimpleNamespace(format=fmt, steps=STEPS, reward=_rise(3))
        out, entry = sweep_cap(sweep, advice, run=run, lr=1e-5,
                               optimizer=run_optimizer(optimizer, fmt),
                               settings={}, floor=None, margin=0.5)
        assert (out != advice) is capped, (optimizer, fmt)
        assert capped or "no fall is compared" in entry["reason"]


def test_the_exponent_is_the_run_optimizers_family():
    """An AdamW run takes the Adam runs' exponent in a sweep of SGD and Adam runs; an SGD run in
    an Adam sweep, or a run whose optimizer is unknown, the theory's (lrs of different
    optimizers are on different scales, as the cap compares no fall across them)."""
    measured = {"sgd": {"value": -0.6, "stderr": 0.1, "learning_rates": [1, 2]},
                "adam": {"value": -0.8, "stderr": 0.1, "learning_rates": [1e-5, 2e-5]}}
    mixed = SimpleNamespace(layout=SimpleNamespace(optimizers=["sgd", "adam"]),
                            tau_lr_exponent=lambda: measured)
    adam = SimpleNamespace(layout=SimpleNamespace(optimizers=["adam"]),
                           tau_lr_exponent=lambda: {"adam": measured["adam"]})
    assert exponent_from_sweep(mixed, run_optimizer("AdamW", "csv"))["value"] == -0.8
    assert exponent_from_sweep(mixed, run_optimizer("sgd", "csv"))["value"] == -0.6
    for fit in (mixed, adam):
        unknown = exponent_from_sweep(fit, run_optimizer(None, "jsonl"))
        assert unknown["status"] == "theory" and "optimizer is unknown" in unknown["reason"]
    other = exponent_from_sweep(adam, run_optimizer("sgd", "jsonl"))
    assert other["status"] == "theory" and "no sgd runs" in other["reason"]
    # a TRL log's optimizer is its trainer's AdamW
    assert exponent_from_sweep(mixed, run_optimizer(None, "trl_trainer_state"))["value"] == -0.8


def test_an_exponent_of_the_wrong_sign_is_named_not_called_missing():
    """Adam runs whose tau grew with the lr fit p > 0: the theory's -1 is used, and the reason
    gives that fit (it said the sweep held no adam runs)."""
    wrong = SimpleNamespace(layout=SimpleNamespace(optimizers=["adam"]),
                            tau_lr_exponent=lambda: {"adam": {"value": 1.1, "stderr": 0.068,
                                                              "learning_rates": [1, 2, 4]}})
    entry = exponent_from_sweep(wrong, run_optimizer("adamw", "jsonl"))
    assert entry["status"] == "theory" and entry["value"] == -1
    assert "p = 1.1 +- 0.068" in entry["reason"] and "no adam runs" not in entry["reason"]


@pytest.mark.parametrize(("case", "expected"), [
    # a run that fell 8x past the sweep's fall: the margin of that fall, x0.5 / 8
    (dict(direction="lower", ratio=0.5, interval=[None, 0.5], lr=8.0, limit=1.0, own_fell=True),
     ("lower", 0.0625, [None, 0.125])),
    # a run that held 4x below it: a raise of x4 is capped at the margin of the fall, x2
    (dict(direction="raise", ratio=4.0, interval=[4.0, None], lr=1.0, limit=4.0, own_fell=False),
     ("raise", 2.0, [None, 4.0])),
    # a run that held just below it: kept at its own lr, never lowered for the sweep
    (dict(direction="raise", ratio=2.0, interval=[1.5, 2.5], lr=3.0, limit=4.0, own_fell=False),
     ("keep", 1.0, [None, 4 / 3])),
    # a lower step already under the margin of the fall: nothing moves but the interval's end
    (dict(direction="lower", ratio=0.5, interval=[None, None], lr=1.0, limit=1.0,
          own_fell=True),
     ("lower", 0.5, [None, 1.0])),
])
def test_cap_at_fall(case, expected):
    direction, ratio, interval, why = cap_at_fall(**case, margin=0.5)
    assert (direction, interval) == (expected[0], pytest.approx(expected[2]))
    assert ratio == pytest.approx(expected[1])
    assert why is not None


def test_cap_leaves_advice_well_below_the_fall():
    assert cap_at_fall("raise", 2.0, [1.5, 3.0], lr=1.0, limit=100.0, own_fell=False,
                       margin=0.5) == ("raise", 2.0, [1.5, 3.0], None)


def _log(path, reward):
    path.write_text(json.dumps({"log_history": [
        {"step": int(s), "reward": float(r)} for s, r in zip(STEPS, reward, strict=True)]}))
    return str(path)


def test_advise_with_a_sweep_stays_below_its_fall(tmp_path, capsys):
    """A run that collapsed at lr 0.16 is halved alone (0.08), past the sweep's fall at 0.04;
    with the sweep it goes to the margin of that fall, 0.02."""
    logs = {lr: _log(tmp_path / f"lr{lr:g}.json", reward) for lr, reward in
            ((0.01, _rise(1)), (0.02, _rise(2)), (0.04, _fall(3)), (0.16, _fall(4)))}
    alone = ["advise", "--log", logs[0.16], "--lr", "0.16", "--momentum", "0.9", "--json"]
    assert main(alone) == 0
    assert json.loads(capsys.readouterr().out)["recommendation"]["lr"] == pytest.approx(0.08)
    argv = list(alone)
    for lr, log in logs.items():
        argv += ["--sweep", log, "--sweep-hparams", f"optimizer=sgd,momentum=0.9,lr={lr}"]
    assert main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recommendation"]["lr"] == pytest.approx(0.02)
    assert out["recommendation"]["direction"] == "lower"
    assert out["basis"]["sweep_fall"]["lr"] == 0.04
    assert out["interval"]["lr"][1] == pytest.approx(0.04)
    assert any(line.startswith("the sweep: ") and "capped" in line for line in out["reasoning"])
    # the run that held at 0.02 is not raised past the margin of the fall (0.02 itself)
    argv[2] = logs[0.02]
    argv[4] = "0.02"
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recommendation"]["lr"] <= 0.02 * (1 + 1e-12)


def test_the_log_among_the_sweep_logs_takes_its_sweep_hparams(tmp_path, capsys):
    """The --log file given again among the --sweep logs is advised with its --sweep-hparams
    (its momentum, not an assumed 0.9), unless --momentum gives one."""
    logs = [_log(tmp_path / f"lr{lr:g}.json", _rise(i)) for i, lr in enumerate((0.01, 0.02))]
    argv = ["advise", "--log", logs[0], "--json"]
    for lr, log in zip((0.01, 0.02), logs, strict=True):
        argv += ["--sweep", log, "--sweep-hparams", f"optimizer=sgd,momentum=0.8,lr={lr}"]
    assert main(argv) == 0
    measured = json.loads(capsys.readouterr().out)["measured"]
    assert (measured["momentum"], measured["momentum_source"], measured["lr"]) == (0.8, "user",
                                                                                   0.01)
    assert main(argv + ["--momentum", "0.5"]) == 0
    assert json.loads(capsys.readouterr().out)["measured"]["momentum"] == 0.5


def test_a_collapse_too_short_for_the_fit_still_bounds_the_limit(tmp_path, capsys):
    """A run logged at 8 points that fell to 0 (public collapses are often stopped early) is
    left out of the joint fit but read for its fall."""
    short = tmp_path / "lr0.04.json"
    short.write_text(json.dumps({"log_history": [
        {"step": s, "reward": r} for s, r in enumerate((0.2, 0.4, 0.5, 0.3, 0.1, 0.0, 0.0, 0.0))]}))
    logs = {0.01: _log(tmp_path / "lr0.01.json", _rise(1)),
            0.02: _log(tmp_path / "lr0.02.json", _rise(2)), 0.04: str(short)}
    argv = ["advise", "--log", logs[0.02], "--json"]
    for lr, log in logs.items():
        argv += ["--sweep", log, "--sweep-hparams", f"optimizer=sgd,momentum=0.9,lr={lr}"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["basis"]["sweep_fall"]["lr"] == 0.04
    assert out["recommendation"]["lr"] <= 0.02 * (1 + 1e-12)
    assert any("read for a fall" in w for w in out["warnings"])


def test_a_sweep_run_is_read_as_the_advice_reads_a_run():
    """series_trend on a run's reward path gives the direction advise_log reads for that run
    (the thirds' test agreeing with its diagnosis's state), on every real-log excerpt."""
    from pathlib import Path

    from grpodyn.empirical.logs.loaders import Run, load_runs
    from grpodyn.empirical.logs.mode_advice import run_diagnosis
    from grpodyn.empirical.logs.trend import agree_with_state, run_trend, series_trend
    from grpodyn.ground import InputError

    read = 0
    for path in sorted((Path(__file__).parent / "data" / "real_logs").iterdir()):
        try:
            runs = load_runs(path)
        except (InputError, ValueError):
            continue
        for run in runs:
            if run.n_points < 3 or not np.isfinite(run.reward).all():
                continue
            agreed = agree_with_state(run_trend(run.steps, run.reward), run, run_diagnosis(run))
            assert series_trend(run.steps, run.reward).kind == agreed.kind, path.name
            read += 1
    assert read >= 8
    # a rise given back by a third: the thirds read a rise, the state a decline (and so does
    # the advice); the bare series is read as the advice reads it
    steps = np.arange(1.0, 201.0)
    path = np.where(steps < 80, 0.2 + 0.6 * steps / 80, 0.8 - 0.2 * (steps - 80) / 120)
    reward = path + 0.01 * np.random.default_rng(6).standard_normal(steps.size)
    run = Run("given back", "test", steps, reward, {})
    agreed = agree_with_state(run_trend(steps, reward), run, run_diagnosis(run))
    assert run_trend(steps, reward).kind != agreed.kind == "fell"
    assert series_trend(steps, reward).kind == "fell"


def _short_fall_sweep(tmp_path) -> list[str]:
    """Two rises (lr 0.01, 0.02) and a fall logged at 8 points (lr 0.04), as --from pairs."""
    short = tmp_path / "lr0.04.json"
    short.write_text(json.dumps({"log_history": [
        {"step": s, "reward": r} for s, r in enumerate((0.2, 0.4, 0.5, 0.3, 0.1, 0.0, 0.0, 0.0))]}))
    logs = {0.01: _log(tmp_path / "lr0.01.json", _rise(1)),
            0.02: _log(tmp_path / "lr0.02.json", _rise(2)), 0.04: str(short)}
    return [(log, f"optimizer=sgd,momentum=0.9,lr={lr}") for lr, log in logs.items()]


def test_sweep_reads_a_short_collapse_as_advise_does(tmp_path, capsys):
    """``grpodyn sweep`` leaves the 8-point fall out of the fit, as before, and reads it for a
    fall as ``advise --sweep`` does: one bound, lr_max <= 0.04, in both commands."""
    pairs = _short_fall_sweep(tmp_path)
    argv = ["sweep", *[log for log, _ in pairs]]
    for _, hparams in pairs:
        argv += ["--hparams", hparams]
    assert main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_runs"] == 2 and out["n_short"] == 1  # the fit's runs, the short one beside
    [fall] = out["falls"]
    assert (fall["optimizer"], fall["lr"], fall["highest_held"], fall["fell"]) == \
        ("sgd", 0.04, 0.02, 1)
    assert any("read for a fall" in w for w in out["warnings"])
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "fall (sgd): " in text
    assert text.startswith("sweep of 3 runs (2 fitted, 1 too short for the joint fit")


def test_transfer_refuses_an_lr_at_which_a_source_fell(tmp_path, capsys):
    """The transfer's mean path cannot fall: at lr 0.04, where a source fell, it is refused
    (exit 2); at 0.03, within a factor 2 of it, it answers with a warning."""
    argv = ["transfer"]
    for log, hparams in _short_fall_sweep(tmp_path):
        argv += ["--from", log, "--hparams", hparams]
    assert main([*argv, "--to", "lr=0.04"]) == 2
    err = capsys.readouterr().err
    assert "at or beyond the lr at which a source fell" in err and "below 0.04" in err
    assert main([*argv, "--to", "lr=0.03", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sweep_fall"]["lr"] == 0.04 and out["sweep_fall"]["highest_held"] == 0.02
    assert any("within a factor 2 of the lr at which a source fell" in w
               for w in out["warnings"])
    assert main([*argv, "--to", "lr=0.015", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not any("source fell" in w for w in out["warnings"])


def test_sweep_falls_groups_by_setting():
    """A fall at G 16 bounds nothing at G 8, where every run held, and is reported at G 16."""
    sweep = _sweep((1e-5, _rise(1), 8), (2e-5, _rise(2), 8), (1e-5, _fall(3), 16))
    [entry] = sweep_falls(sweep.runs)
    assert entry["settings"]["group_size"] == 16 and entry["lr"] == 1e-5
    assert sweep_falls(sweep.runs[:2]) == []


def test_a_run_too_short_for_a_fall_is_left_out_and_all_short_is_said(tmp_path, capsys):
    """A 2-point log beside the sweep is left out with a note (it stopped the fall's reading
    with an error that named no log); a sweep of short runs alone says that none is long
    enough for the joint fit, naming each."""
    pairs = _short_fall_sweep(tmp_path)
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"log_history": [{"step": 1, "reward": 0.3},
                                               {"step": 2, "reward": 0.1}]}))
    argv = ["sweep", *[log for log, _ in pairs], str(two)]
    for _, hparams in pairs:
        argv += ["--hparams", hparams]
    assert main([*argv, "--hparams", "optimizer=sgd,momentum=0.9,lr=0.08", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("two.json: 2 reward points, fewer than the 3 a fall needs: left out" in w
               for w in out["warnings"])
    assert main(["sweep", pairs[2][0], str(two), "--hparams", pairs[2][1], "--hparams",
                 "optimizer=sgd,momentum=0.9,lr=0.08"]) == 2
    err = capsys.readouterr().err
    assert "no run has the 10 reward points the joint fit needs" in err and "two.json 2" in err


def test_a_run_that_leaves_g_unknown_forms_no_group_of_its_own():
    """G 8 fell at 2e-5, G 16 held to 4e-5 and fell at 8e-5; a run without G held at 1e-6.
    Two bounds, one per G: no third that pools both and calls the G 8 fall not the lr's."""
    sweep = _sweep((1e-5, _rise(1), 8), (2e-5, _fall(2), 8), (4e-5, _rise(3), 16),
                   (8e-5, _fall(4), 16))
    unknown = SweepRun("no G", STEPS, _rise(5), {"optimizer": "adam", "lr": 1e-6, "batch": 8,
                                                 "num_iterations": 1})
    entries = sweep_falls([*sweep.runs, unknown])
    assert sorted((e["settings"]["group_size"], e["lr"]) for e in entries) == \
        [(8, 2e-5), (16, 8e-5)]
    assert all("own_fell" not in e for e in entries)
