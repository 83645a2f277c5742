"""``grpodyn sweep`` and ``grpodyn transfer`` on a reward of another scale, a target lr past the
stability limit, and flags that contradict each other: the range comes from the runs, an
unstable target is refused, and a conflict is named instead of one flag winning silently."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run, transfer
from grpodyn.ground import InputError

DATA = Path(__file__).parents[1] / "studies" / "tiny_grids" / "data"
GRID = [DATA / "tiny_grid" / f"adam_lr{lr}_G4_B8_seed0.json" for lr in ("0.0003", "0.0006")]
CLIMB = [DATA / "tiny_climb" / f"adam_lr{lr}_G8_B32_seed49.json"
         for lr in ("5e-05", "0.0001", "0.0002")]


def _needs(paths: list[Path]) -> None:
    if not all(p.is_file() for p in paths):
        pytest.skip("the tiny grids live in the repository's studies/ folder, absent here")


def _scaled(folder: Path, factor: float) -> list[str]:
    """The two tiny-grid runs with every logged reward multiplied by ``factor``."""
    _needs(GRID)
    out = []
    for path in GRID:
        state = json.loads(path.read_text())
        for entry in state["log_history"]:
            if "reward" in entry:
                entry["reward"] *= factor
        target = folder / f"x{factor:g}_{path.name}"
        target.write_text(json.dumps(state))
        out.append(str(target))
    return out


@pytest.fixture(scope="module")
def unscaled():
    _needs(GRID)
    return fit_sweep([load_sweep_run(p) for p in GRID])


@pytest.mark.parametrize("factor", [40.0, 1e12])
def test_a_reward_of_another_scale_fits_as_the_same_runs_scaled(unscaled, factor, tmp_path):
    """Rewards x40 (0-25) or x1e12: r0, the plateau and their errors scale, kappa and R^2 do not.

    A fixed box [-10, 10] held the x40 plateau at 10 (R^2 -0.24) and the x1e12 r0 and plateau at
    its edge; the x1e12 errors also need the covariance taken per unit of the reward's scale.
    """
    fit = fit_sweep([load_sweep_run(p) for p in _scaled(tmp_path, factor)])
    assert fit.layout.reward_range == (-np.inf, np.inf) and not fit.layout.finite_group
    assert any("reward range unknown" in w and "not bounded" in w for w in fit.warnings)
    base, scaled = unscaled.constants(), fit.constants()
    for name in ("r0", "r_star_adam"):
        assert scaled[name]["status"] == base[name]["status"]
        assert "determined" in scaled[name]["status"]
        assert scaled[name]["value"] == pytest.approx(factor * base[name]["value"], rel=1e-3)
        assert scaled[name]["stderr"] == pytest.approx(factor * base[name]["stderr"], rel=2e-2)
    assert scaled["kappa_A_ref"]["value"] == pytest.approx(base["kappa_A_ref"]["value"],
                                                           rel=1e-3)
    r2 = [[r["r2"] for r in f.run_report()] for f in (unscaled, fit)]
    assert r2[1] == pytest.approx(r2[0], abs=1e-3)


def test_a_transfer_of_a_reward_without_a_known_range_is_not_boxed(tmp_path):
    """x40 rewards transferred to lr 9e-4: the mean once sat at 10.000 at every step."""
    out = transfer(_scaled(tmp_path, 40.0), {"lr": 9e-4}, draws=40, cross_validate=False)
    mean = np.asarray(out["mean"])
    assert np.all(np.isfinite(mean)) and mean.max() > 11.0 and mean.min() > 5.0
    assert any(w.startswith("no known reward range") for w in out["warnings"])
    assert not any("[-10" in w for w in out["warnings"])


def test_draws_that_run_away_without_a_range_are_left_out_and_said(tmp_path):
    """No edge to count a diverging draw at: it leaves the band, and a warning says so."""
    out = transfer(_scaled(tmp_path, 40.0), {"lr": 0.8}, draws=100, cross_validate=False)
    assert "1 of 100 draws of the constants run away" in " ".join(out["warnings"])
    assert np.all(np.isfinite(out["lower"])) and np.all(np.isfinite(out["upper"]))


def test_a_declared_reward_range_bounds_sweep_and_transfer(unscaled, tmp_path, capsys):
    """--reward-range 0,40: the plateau is fitted inside it and the transfer's mean kept there."""
    logs = _scaled(tmp_path, 40.0)
    assert main(["sweep", "--json", "--reward-range", "0,40", *logs]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert not any("reward range unknown" in w for w in fitted["warnings"])
    assert fitted["constants"]["r_star_adam"]["value"] == pytest.approx(
        40 * unscaled.constants()["r_star_adam"]["value"], rel=1e-3)
    argv = ["transfer", "--json", "--reward-range", "0,40", "--from", logs[0], "--from", logs[1],
            "--to", "lr=0.0009"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert any(a.startswith("a mean reward in [0, 40]") for a in out["assumptions"])
    assert 0.0 <= min(out["lower"]) and max(out["upper"]) <= 40.0


@pytest.mark.parametrize("factor", [40.0, 1e12])
def test_a_declared_range_of_another_scale_gives_the_same_model_scaled(factor, tmp_path):
    """SGD runs of three (G, B) scaled into a declared [0, factor]: the finite-G factor takes the
    reward as a share of its range, the drag its scale, the sampling noise its share; the fit
    and the transfer are those of the runs in [0, 1], times the factor."""
    names = ["sgd_lr0.005_G4_B8_seed0", "sgd_lr0.01_G2_B8_seed0", "sgd_lr0.01_G4_B16_seed0"]
    paths = [DATA / "tiny_grid" / f"{n}.json" for n in names]
    _needs(paths)
    scaled = []
    for path in paths:
        state = json.loads(path.read_text())
        for entry in state["log_history"]:
            entry["reward"] *= factor
        scaled.append(tmp_path / path.name)
        scaled[-1].write_text(json.dumps(state))
    base = [load_sweep_run(p) for p in paths]
    wide = [load_sweep_run(p, reward_range=(0.0, factor)) for p in scaled]
    fits = [fit_sweep(runs) for runs in (base, wide)]
    assert fits[1].layout.finite_group and fits[1].layout.has("log_drag_completion_sgd")
    one, wider = (f.constants() for f in fits)
    for name in ("r0", "r_star_sgd", "drag_completion_sgd"):
        assert wider[name]["value"] == pytest.approx(factor * one[name]["value"], rel=1e-3)
        assert wider[name]["status"] == one[name]["status"]
    assert wider["kappa"]["value"] == pytest.approx(one["kappa"]["value"], rel=1e-3)
    outs = [transfer(runs, {"lr": 0.02}, fit=fit, draws=30, cross_validate=False)
            for runs, fit in zip((base, wide), fits, strict=True)]
    for key in ("mean", "lower", "upper"):
        assert np.asarray(outs[1][key]) == pytest.approx(factor * np.asarray(outs[0][key]),
                                                         rel=1e-2, abs=5e-4 * factor)


def test_a_declared_range_the_rewards_leave_is_refused(tmp_path, capsys):
    logs = _scaled(tmp_path, 40.0)
    assert main(["sweep", "--reward-range", "0,10", *logs]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and logs[0] in err and "outside it" in err


def _line(name: str, reward: np.ndarray, **fields) -> SweepRun:
    return SweepRun(name, np.arange(reward.size, dtype=float), reward,
                    {"optimizer": "sgd", "lr": 0.01, "momentum": 0.9}, **fields)


def test_runs_that_declare_different_ranges_are_refused():
    reward = 0.2 + 0.5 * (1 - np.exp(-np.arange(40) / 10))
    runs = [_line("a", reward, declared_range=(0.0, 1.0)),
            _line("b", reward * 1.5, declared_range=(0.0, 2.0))]
    with pytest.raises(InputError, match=r"declare \[0.0, 1.0\], \[0.0, 2.0\]"):
        fit_sweep(runs)


def test_a_reward_named_a_rate_that_leaves_0_1_is_fitted_unbounded_and_says_why():
    """The name says accuracy ([0, 1]) but the values reach 25 (a percent or summed reward): no
    bound is taken from the name (it would miss the data), and the fit's note says why."""
    reward = 5 + 20 * (1 - np.exp(-np.arange(40) / 10))
    fit = fit_sweep([_line("a", reward, reward_key="accuracy")])
    assert fit.layout.reward_range == (-np.inf, np.inf)
    assert any("the reward's name 'accuracy' reads as a rate in [0, 1], but 40 of 40" in w
               for w in fit.warnings)


def _climb_args(target: str, *extra: str) -> list[str]:
    _needs(CLIMB)
    return ["transfer", *(a for p in CLIMB for a in ("--from", str(p))), "--to", target,
            *extra]


@pytest.mark.parametrize("lr", ["100", "3"])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_target_lr_past_the_stability_limit_is_refused(lr, json_flag, capsys):
    """lr 100 printed a traceback (text) or 172 null means (JSON); lr 3 passed as 'within a
    factor 2' of the limit 1.62 it lies beyond."""
    assert main(_climb_args(f"lr={lr}", *json_flag)) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and f"--to lr={lr}:" in err
    assert "stability limit 1.62" in err and "Traceback" not in err
    assert captured.out == ""


def test_a_target_lr_near_the_limit_is_predicted_with_a_true_warning():
    _needs(CLIMB)
    out = transfer([str(p) for p in CLIMB], {"lr": 1.5}, draws=20, cross_validate=False)
    assert all(v is not None and np.isfinite(v) for v in out["mean"])
    assert any(w.startswith("lr 1.5 is within a factor 2 of the stability limit 1.62")
               for w in out["warnings"])
    far = transfer([str(p) for p in CLIMB], {"lr": 4e-4}, draws=0, cross_validate=False)
    assert not any("factor 2" in w for w in far["warnings"])


def test_steps_given_twice_and_apart_are_refused(capsys):
    assert main(_climb_args("lr=0.0004,steps=50", "--steps", "60")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--steps 60" in err and "--to steps=50" in err


def test_steps_given_twice_alike_are_taken(capsys):
    _needs(GRID)
    argv = ["transfer", "--json", "--from", str(GRID[0]), "--from", str(GRID[1]),
            "--to", "lr=0.0009,steps=50", "--steps", "50"]
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)["mean"]) == 50


def test_a_target_seed_no_source_has_is_refused_where_the_sources_hold_one(capsys):
    """Sources of seed 49 alone: seed 99 took seed 49's r0 with no word said."""
    assert main(_climb_args("lr=0.0004,seed=99")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--to seed=99" in err and "seed 49 only" in err


def test_advise_passes_its_reward_range_to_the_sweep(tmp_path, capsys):
    scaled = _scaled(tmp_path, 40.0)  # the sweep's runs reach 25; the advised run stays below 1
    argv = ["advise", "--log", str(GRID[0]), "--sweep", scaled[0], "--sweep", scaled[1],
            "--reward-range", "0,10"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "outside it" in err and scaled[0] in err
