"""The transfer's band and mean: a band narrower than the reward range where the data
constrain it, a mean inside the range, steps labelled as the logs count them, the optimizer
taken from the log's format, and Adam's B G fallback with its status; small seeded sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run, transfer
from grpodyn.empirical.logs.sweep_band import RewardScale
from grpodyn.ground import InputError
from grpodyn.numerics.mean_field_map import MeanFieldMap

STEPS = 150
DATA = Path(__file__).resolve().parent / "data" / "real_logs"


def _run(optimizer: str, lr: float, seed: int, *, group: int = 8, batch: int = 8,
         r0: float = 0.2, star: float = 0.7) -> SweepRun:
    adam = optimizer == "adam"
    system = MeanFieldMap(lr=lr, kappa=30.0 if adam else 0.5, optimizer=optimizer,
                          momentum=0.9, noise_ratio=64.0 if adam else None,
                          group_size=group, batch=batch)
    mean = star + system.displacement(STEPS - 1, e0=r0 - star)[0]
    rng = np.random.default_rng(seed * 7919 + int(lr * 1e7) + group * 31 + batch)
    reward = rng.binomial(group * batch, np.clip(mean, 0, 1)) / (group * batch)
    hp = {"optimizer": optimizer, "lr": lr, "momentum": 0.9, "group_size": group,
          "batch": batch, "kl": 0.0, "schedule": "constant", "seed": seed}
    return SweepRun(f"{optimizer}_{lr:g}_{group}_{batch}_{seed}", np.arange(STEPS, dtype=float),
                    reward, hp, first_step=1.0)


def test_band_is_narrower_than_the_range_where_the_data_constrain_it():
    runs = [_run("sgd", lr, seed) for lr in (0.005, 0.01, 0.02) for seed in (0, 1)]
    fit = fit_sweep(runs, finite_group=False)
    out = transfer(runs, {"lr": 0.014, "seed": 0}, fit=fit, steps=STEPS - 1, draws=60)
    width = np.asarray(out["upper"]) - np.asarray(out["lower"])
    assert np.all(width[20:] < 0.35)  # the binomial noise of one step at B G = 64 is ~0.06 sd
    truth = _run("sgd", 0.014, 0)
    inside = (truth.reward >= np.asarray(out["lower"])) & (truth.reward <= np.asarray(out["upper"]))
    assert inside.mean() >= 0.8
    assert out["exponents"]["tau_lr"]["status"].startswith("determined")


def test_mean_stays_inside_the_reward_range_near_the_top():
    # a plateau at 0.995 and an lr x4 beyond the sources: the map overshoots, the mean may not
    runs = [_run("sgd", lr, seed, r0=0.5, star=0.995) for lr in (0.01, 0.02) for seed in (0, 1)]
    fit = fit_sweep(runs, finite_group=False)
    out = transfer(runs, {"lr": 0.08, "seed": 0}, fit=fit, steps=STEPS - 1, draws=40,
                   cross_validate=False)
    mean = np.asarray(out["mean"])
    assert mean.max() < 1.0 and mean.min() > 0.0
    assert np.all(np.asarray(out["lower"]) <= mean) and np.all(mean <= np.asarray(out["upper"]))
    assert np.asarray(out["upper"]).max() <= 1.0


def test_reward_scale_maps_any_path_back_inside_its_range():
    scale = RewardScale(0.0, 1.0, bounded=True)
    path = np.array([-0.3, 0.0, 0.4, 1.0, 1.105])
    back = scale.back(scale.forward(path))
    assert np.all((back > 0.0) & (back < 1.0))
    assert back[2] == pytest.approx(0.4)
    assert np.all(np.diff(back) >= 0)  # order kept
    plain = RewardScale(-10.0, 10.0, bounded=False)
    assert plain.back(plain.forward(path)).tolist() == path.tolist()


def _write_trl(folder: Path, run: SweepRun, hparams: bool = True) -> Path:
    state = {"log_history": [{"step": int(n) + 1, "reward": float(r)}
                             for n, r in zip(run.steps, run.reward, strict=True)]}
    if hparams:
        state["grpodyn_hparams"] = run.hparams
    path = folder / f"{run.name}.json"
    path.write_text(json.dumps(state))
    return path


def test_predicted_steps_are_the_logs_own(tmp_path, capsys):
    args = []
    for lr in (0.005, 0.01, 0.02):
        args += ["--from", str(_write_trl(tmp_path, _run("sgd", lr, 0)))]
    assert main(["transfer", *args, "--to", "lr=0.014", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][0] == 1 and out["steps"][-1] == STEPS  # the logs hold 1..150
    assert len(out["steps"]) == len(out["mean"]) == STEPS


def test_optimizer_comes_from_the_trl_format_not_from_hparams(tmp_path):
    log = DATA / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.excerpt.json"
    run = load_sweep_run(log, {"group_size": 4, "batch": 2})
    assert run.hparams["optimizer"] == "adam" and run.hparams["momentum"] == 0.9
    assert "trainer default" in run.sources["optimizer"] and "TRL" in run.sources["optimizer"]
    assert run.first_step == 1.0
    # a log whose format names no trainer still asks for the optimizer
    csv = DATA / ("garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data"
                  ".excerpt.csv")
    with pytest.raises(InputError, match="optimizer"):
        load_sweep_run(csv, {"lr": 1e-5})
    # an explicit SGD keeps the trainer's beta1 out of its momentum
    with pytest.raises(InputError, match="momentum"):
        load_sweep_run(log, {"optimizer": "sgd"})


def test_adam_bg_not_determined_falls_back_to_the_nearest_source():
    # every source at B G = 64: the B G exponent is not determined for a target at G = 16
    runs = [_run("adam", lr, seed) for lr in (3e-4, 6e-4, 1.2e-3) for seed in (0, 1)]
    fit = fit_sweep(runs)
    out = transfer(runs, {"lr": 6e-4, "group_size": 16, "seed": 0}, fit=fit, steps=STEPS - 1,
                   draws=40, cross_validate=False)
    bg = out["exponents"]["bg"]
    assert bg["status"].startswith("not determined") and bg["range"] == [0.0, 0.5]
    assert bg["fallback"] == {"lr": 6e-4, "group_size": 8, "batch": 8}
    assert any("B G exponent" in w for w in out["warnings"])
    system = MeanFieldMap(lr=6e-4, kappa=30.0, optimizer="adam", momentum=0.9, noise_ratio=64.0,
                          group_size=8, batch=8)
    nearest = 0.7 + system.displacement(STEPS - 1, e0=0.2 - 0.7)[0]  # its noise-free path
    mean, lower, upper = (np.asarray(out[k]) for k in ("mean", "lower", "upper"))
    assert np.mean(np.abs(mean - nearest)) < 0.03  # the nearest source's path, smoothed
    assert np.all(lower <= mean) and np.all(mean <= upper)
    # the band covers the law's range: the map at the upper exponent (k x 2^0.5) lies inside
    same = transfer(runs, {"lr": 6e-4, "seed": 0}, fit=fit, steps=STEPS - 1, draws=40,
                    cross_validate=False)
    assert same["exponents"]["bg"]["status"].startswith("not needed")
    assert np.all(upper - lower >= np.asarray(same["upper"]) - np.asarray(same["lower"]) - 1e-9)


@pytest.mark.parametrize("optimizer, settings, kwargs", [
    ("sgd", [(lr, 8, 8) for lr in (0.005, 0.01, 0.02)], {}),
    ("sgd", [(0.01, 4, 8), (0.01, 8, 8), (0.01, 8, 16), (0.02, 16, 4)], {}),
    ("adam", [(lr, 8, 8) for lr in (0.002, 0.004)], {}),
    ("adam", [(0.002, 4, 8), (0.002, 8, 8), (0.002, 8, 16), (0.004, 16, 4)], {}),
    ("adam", [(0.002, 4, 8), (0.002, 8, 8), (0.002, 8, 16)], {"noise_drag": False,
                                                               "prompt_noise": False}),
])
def test_the_band_draws_in_one_pass_are_the_draws_one_by_one(optimizer, settings, kwargs):
    # the band iterates every draw of the constants in one vectorised pass of the map: the
    # same curves as the evaluator gives each draw alone (finite-G factor, noise drag, Adam's
    # noise ratios and its signal limit)
    from grpodyn.empirical.logs.sweep_model import Evaluator

    runs = [_run(optimizer, lr, seed, group=g, batch=b) for lr, g, b in settings
            for seed in (0, 1)]
    fit = fit_sweep(runs, **kwargs)
    hp = dict(runs[0].hparams, lr=runs[0].hparams["lr"] * 1.5, group_size=12, batch=6)
    evaluator = Evaluator([hp], [np.arange(STEPS)], fit.layout)
    rng = np.random.default_rng(3)
    thetas = fit.theta + 0.05 * rng.standard_normal((7, fit.theta.size))
    factors = np.exp(0.2 * rng.standard_normal(7))
    one_by_one = np.array([evaluator.curves(t, np.array([f]))[0]
                           for t, f in zip(thetas, factors, strict=True)])
    together = evaluator.draw_curves(thetas, factors)
    assert together.shape == (7, STEPS)
    np.testing.assert_allclose(together, one_by_one, rtol=1e-12, atol=1e-14)


def test_sources_that_start_at_different_steps_are_said_to():
    """Sources logged from steps 20 and 25: each aligned at its own first point, the prediction
    labelled from the most common start, and a warning that says so."""
    from dataclasses import replace

    runs = [replace(_run("sgd", lr, 0), first_step=start)
            for lr, start in ((0.005, 20.0), (0.01, 20.0), (0.02, 25.0))]
    out = transfer(runs, {"lr": 0.014}, steps=10, draws=0, cross_validate=False)
    assert out["steps"][0] == 20 and out["steps"][-1] == 30
    assert any("start at steps 20, 25" in w and "count from 20" in w for w in out["warnings"])
    same = transfer(runs[:2], {"lr": 0.007}, steps=10, draws=0, cross_validate=False)
    assert not any("start at steps" in w for w in same["warnings"])


def _oscillatory_band(mean: list[float]) -> dict:
    """A transfer's result as print_human reads it: ``mean`` over steps 0.., an oscillatory map."""
    return {"warnings": [], "level": 0.9, "steps": list(range(len(mean))), "mean": mean,
            "lower": [0.0] * len(mean), "upper": [1.0] * len(mean),
            "system": {"regime": "oscillatory", "zeta": 0.47}}


def test_the_text_shows_where_an_oscillatory_mean_peaks(capsys):
    """Every tenth step hid the overshoot (0.84 at step 7 shown as 0.782 at step 10)."""
    from grpodyn.cli.transfer import print_human

    result = _oscillatory_band([0.04, 0.29, 0.48, 0.63, 0.73, 0.79, 0.83, 0.84, 0.83, 0.81, 0.78]
                               + [0.6] * 89)
    print_human(result)
    text = capsys.readouterr().out
    assert "the mean overshoots: 0.840 at step 7" in text and "\n    7 0.840" in text
    print_human({**result, "system": {"regime": "overdamped", "zeta": 1.5}})
    assert "overshoots" not in capsys.readouterr().out


def test_the_text_shows_where_a_falling_oscillatory_mean_turns(capsys):
    """A falling mean overshoots its plateau from below: its trough is shown and said."""
    from grpodyn.cli.transfer import print_human

    print_human(_oscillatory_band([0.8, 0.6, 0.45, 0.36, 0.33, 0.34, 0.37] + [0.4] * 93))
    text = capsys.readouterr().out
    assert "the mean overshoots: 0.330 at step 4" in text and "below the plateau" in text
    assert "\n    4 0.330" in text
    print_human(_oscillatory_band([]))
    assert "no step to show" in capsys.readouterr().out


def test_load_sweep_run_picks_a_run_of_a_log_that_holds_several():
    log = Path(__file__).parent / "data" / "real_logs" / (
        "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv")
    given = {"optimizer": "sgd", "momentum": 0.9}
    first, second = (load_sweep_run(log, given, run=name)
                     for name in ("lr_sweep_1e-5", "lr_sweep_1e-4"))
    assert (first.hparams["lr"], second.hparams["lr"]) == (1e-5, 1e-4)
    assert second.name.endswith("[lr_sweep_1e-4]") and len(second.reward) != len(first.reward)
