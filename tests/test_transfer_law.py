"""The transfer against the law: the tau-lr and B G exponents the sources measure are
compared with the law's; where they agree the transfer is the map's, where they contradict it the
transfer falls back to the nearest source with a band that covers the sources' spread. Small
seeded SGD sweeps whose stiffness goes like lr^a (a = 1: the law; a < 0: tau rising with lr)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, transfer
from grpodyn.empirical.logs.sweep_exponents import _against_measurement, lr_exponent
from grpodyn.numerics.mean_field_map import MeanFieldMap

R0, R_STAR, KAPPA = 0.2, 0.7, 0.5
STEPS = 160
HP = {"optimizer": "sgd", "momentum": 0.9, "group_size": 8, "batch": 8, "kl": 0.0,
      "schedule": "constant"}


def _path(lr: float, exponent: float) -> np.ndarray:
    """The noise-free mean path of the large-G SGD map with stiffness ~ lr^exponent."""
    system = MeanFieldMap(lr=0.01 * (lr / 0.01) ** exponent, kappa=KAPPA, optimizer="sgd",
                          momentum=0.9)
    return R_STAR + system.displacement(STEPS - 1, e0=R0 - R_STAR)[0]


def _run(lr: float, seed: int, exponent: float) -> SweepRun:
    rng = np.random.default_rng(seed * 1009 + int(lr * 1e5))
    reward = rng.binomial(1024, np.clip(_path(lr, exponent), 0, 1)) / 1024
    return SweepRun(f"lr{lr:g}_seed{seed}", np.arange(STEPS, dtype=float), reward,
                    {**HP, "lr": lr, "seed": seed})


def _transfer(exponent: float, target_lr: float) -> tuple[dict, list[SweepRun]]:
    runs = [_run(lr, seed, exponent) for lr in (0.005, 0.01, 0.04) for seed in (0, 1)]
    fit = fit_sweep(runs, finite_group=False)
    out = transfer(runs, {"lr": target_lr, "seed": 2}, fit=fit, steps=STEPS - 1, draws=60,
                   cross_validate=False)
    return out, runs


def test_a_measured_exponent_that_agrees_with_the_law_is_used_unchanged():
    out, _ = _transfer(1.0, 0.02)
    lr = out["exponents"]["tau_lr"]
    assert lr["status"].startswith("determined") and "agrees with the law" in lr["status"]
    assert not lr["contradicts_law"] and "fallback" not in lr
    assert abs(lr["z_law"]) <= 2
    assert not any("does not describe" in w for w in out["warnings"])
    # the map's mean at the held-out lr: close to the truth, far from the nearest copy's shape
    truth = _path(0.02, 1.0)
    assert np.mean(np.abs(np.asarray(out["mean"]) - truth)) < 0.02


def test_tau_rising_with_lr_contradicts_the_law_and_falls_back_with_a_covering_band():
    out, runs = _transfer(-0.4, 0.015)  # tau ~ lr^0.4: a larger step learns more slowly
    lr = out["exponents"]["tau_lr"]
    assert lr["contradicts_law"] and lr["status"].startswith("contradicts the law")
    assert lr["value"] > 0 and lr["value"] - 2 * lr["stderr"] > -1
    assert lr["fallback"] == {"lr": 0.01, "group_size": 8, "batch": 8}
    assert any("does not describe this sweep" in w for w in out["warnings"])
    assert not any("extrapolated" in w for w in out["warnings"])
    mean, lower, upper = (np.asarray(out[k]) for k in ("mean", "lower", "upper"))
    nearest = np.mean([r.reward for r in runs if r.hparams["lr"] == 0.01], axis=0)
    assert np.mean(np.abs(mean - nearest)) < 0.03  # the nearest source's path, smoothed
    assert np.all(lower <= mean) and np.all(mean <= upper) and np.all((mean >= 0) & (mean <= 1))
    # the band covers the sources' spread: every other source setting's path lies inside it
    for lr_other in (0.005, 0.04):
        path = _path(lr_other, -0.4)
        assert np.mean((path >= lower) & (path <= upper)) > 0.9
    truth = _path(0.015, -0.4)
    assert np.mean((truth >= lower) & (truth <= upper)) > 0.95


def _bg_fit(value: float, stderr: float, law: float) -> SimpleNamespace:
    """A stand-in fit whose sources measure a B G exponent at lr 1e-3 over B G 32 and 128."""
    test = {"adam": {"lr": 1e-3, "bg_exponent": {"value": value, "stderr": stderr},
                     "predicted_bg_exponent": law,
                     "settings": [{"group_size": 8, "batch": 4}, {"group_size": 8, "batch": 16}]}}
    return SimpleNamespace(bg_test=lambda: test)


@pytest.mark.parametrize(("value", "stderr", "law", "verdict"), [
    (0.40, 0.05, 0.43, "agrees"),       # within 2 se of the fitted law: the law unchanged
    (-0.05, 0.12, 0.45, "corrected"),   # inside the law's range, 4 se from the fitted law
    (-1.0, 0.13, 0.30, "contradicts"),  # 7 se below the law's range [0, 1/2]
    (0.9, 0.15, 0.45, "contradicts"),   # 2.7 se above it
])
def test_the_b_g_exponent_against_the_law(value, stderr, law, verdict):
    out = _against_measurement(_bg_fit(value, stderr, law), {"value": law, "status": "fitted"})
    assert out["contradicts_law"] == (verdict == "contradicts")
    assert ("correction" in out) == (verdict == "corrected")
    if verdict == "agrees":
        assert out["value"] == law and "agrees with the direct measurement" in out["status"]
        # the law's exponent there, beside the measurement, not the target's beside it
        assert f"at the sources' B G 64 the law's {law:.2f} agrees" in out["status"]
    if verdict == "corrected":  # the measurement truncated to [0, 1/2]: inside it, near 0
        corr = out["correction"]
        assert 0.0 < out["value"] == corr["value"] < 0.15 and corr["bg_ref"] == pytest.approx(64)
        assert out["law_value"] == law
    if verdict == "contradicts":
        assert out["status"].startswith("contradicts the law")


def test_an_exponent_the_sources_do_not_measure_is_the_laws():
    runs = [_run(0.01, seed, 1.0) for seed in (0, 1)]
    fit = fit_sweep(runs, finite_group=False)
    out = lr_exponent(fit, {**HP, "lr": 0.02})
    assert out["value"] == -1.0 and out["status"].startswith("not determined")
    assert "contradicts_law" not in out


def test_groups_of_learning_rates_that_disagree_contradict_the_one_exponent():
    """Two groups of settings, each with two lrs, whose own exponents differ by 5 se."""
    def stub(slopes: list[float]) -> SimpleNamespace:
        from grpodyn.empirical.logs.sweep_fit import _heterogeneity
        x = np.log([0.01, 0.02, 0.01, 0.02])
        y = np.concatenate([s * x[:2] for s in slopes])
        w, member = np.full(4, 1 / 0.1**2), np.array([0, 0, 1, 1])
        spread = _heterogeneity(x, y, w, member, float(np.mean(slopes)))
        measured = {"sgd": {"value": float(np.mean(slopes)), "stderr": 0.07,
                            "learning_rates": [0.01, 0.02], "heterogeneity": spread}}
        return SimpleNamespace(tau_lr_exponent=lambda: measured, fitted=[
            SimpleNamespace(hparams={"optimizer": "sgd", "lr": v}) for v in (0.01, 0.02)])
    split = lr_exponent(stub([0.4, -0.6]), {**HP, "lr": 0.04})
    assert split["contradicts_law"] and "disagree" in split["status"]
    together = lr_exponent(stub([-0.95, -1.05]), {**HP, "lr": 0.04})
    assert not together["contradicts_law"] and "agrees with the law" in together["status"]
