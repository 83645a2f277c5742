"""Runs of one seed and one batch draw the same prompts: the noise model measures the
between-prompt part from them, and the transfer conditions its mean on them;
small seeded sweeps of a prompt-heterogeneous pass/fail task."""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, transfer
from grpodyn.empirical.logs.sweep_band import noise_model, shared_prompt_part
from grpodyn.numerics.mean_field_map import MeanFieldMap

STEPS = 150
SPREAD = 1.5  # sd of the prompts' logit pass rates around the mean path


def _run(lr: float, seed: int, *, group: int = 8, batch: int = 8, shared: bool = True
         ) -> SweepRun:
    """An SGD run whose step n draws ``batch`` prompts (the seed's, when ``shared``)."""
    system = MeanFieldMap(lr=lr, kappa=0.5, optimizer="sgd", momentum=0.9)
    mean = 0.7 + system.displacement(STEPS - 1, e0=0.3 - 0.7)[0]
    own = np.random.default_rng([seed, int(lr * 1e6), group, batch])
    prompts = np.random.default_rng([seed, batch]) if shared else own
    z = prompts.normal(size=(STEPS, batch))  # which prompts step n draws
    p = expit(logit(np.clip(mean, 0.01, 0.99))[:, None] + SPREAD * z)
    reward = own.binomial(group, p).mean(axis=1) / group
    hp = {"optimizer": "sgd", "lr": lr, "momentum": 0.9, "group_size": group, "batch": batch,
          "kl": 0.0, "schedule": "constant", "seed": seed}
    return SweepRun(f"sgd_{lr:g}_{group}_{batch}_{seed}", np.arange(STEPS, dtype=float),
                    reward, hp)


def _sweep(shared: bool) -> list[SweepRun]:
    return [_run(lr, seed, group=g, batch=b, shared=shared) for seed in (0, 1)
            for lr, g, b in ((0.005, 8, 8), (0.01, 8, 8), (0.02, 8, 8), (0.01, 4, 8),
                             (0.01, 8, 4))]


def _prompt_share(spread: float) -> float:
    """c_B = Var(p_i) / (p (1 - p)) at a mean of 0.5 for logit pass rates N(0, spread^2)."""
    p = expit(spread * np.random.default_rng(7).normal(size=200_000))
    return float(np.var(p) / (np.mean(p) * (1 - np.mean(p))))


def test_noise_model_measures_the_prompt_part_from_runs_that_share_prompts():
    coef, _ = noise_model(fit_sweep(_sweep(shared=True), finite_group=False, noise_drag=False))
    c_b, c_bg = coef
    truth = _prompt_share(SPREAD)  # about 0.3: a pass/fail reward has c_B + c_BG = 1
    assert abs(c_b - truth) < 0.12
    assert abs(c_b + c_bg - 1.0) < 0.25
    assert shared_prompt_part(fit_sweep(_sweep(shared=True), finite_group=False,
                                        noise_drag=False))["status"] == "measured"


def test_runs_that_draw_their_own_prompts_are_not_conditioned():
    runs = _sweep(shared=False)
    sources = [r for r in runs if r.hparams["lr"] != 0.02]
    fit = fit_sweep(sources, finite_group=False, noise_drag=False)
    part = shared_prompt_part(fit)
    assert part["status"].startswith("not measured: runs of one seed and B share no prompt")
    out = transfer(sources, {"lr": 0.02, "group_size": 8, "batch": 8, "seed": 0}, fit=fit,
                   steps=STEPS - 1, draws=0, cross_validate=False)
    assert out["shared_prompts"]["beta"] is None and "shift" not in out["shared_prompts"]


def test_transfer_conditions_on_the_prompts_of_its_seed_and_batch():
    runs = _sweep(shared=True)
    sources = [r for r in runs if r.hparams["lr"] != 0.02]
    fit = fit_sweep(sources, finite_group=False, noise_drag=False)
    target = _run(0.02, 0)
    out = transfer(sources, {"lr": 0.02, "group_size": 8, "batch": 8, "seed": 0}, fit=fit,
                   steps=STEPS - 1, draws=30, cross_validate=False)
    shared = out["shared_prompts"]
    assert shared["status"].startswith("conditioned") and 0.5 < shared["beta"] < 1.0
    assert len(shared["partners"]) == 3  # seed 0, B 8: lr 0.005, 0.01 at G 8 and 0.01 at G 4
    mean = np.asarray(out["mean"])
    plain = mean - np.asarray(shared["shift"])
    mse, mse_plain = (float(np.mean((target.reward - m) ** 2)) for m in (mean, plain))
    assert mse < 0.75 * mse_plain  # the prompts' share of the step noise is predicted
    copy = next(r for r in sources if r.hparams["lr"] == 0.01 and r.hparams["seed"] == 0
                and r.hparams["group_size"] == 8 and r.hparams["batch"] == 8)
    assert mse < float(np.mean((target.reward - copy.reward) ** 2))
    inside = (target.reward >= np.asarray(out["lower"])) & (target.reward <= np.asarray(
        out["upper"]))
    assert 0.75 <= inside.mean() <= 0.99


def test_no_partner_no_conditioning():
    runs = _sweep(shared=True)
    sources = [r for r in runs if r.hparams["batch"] == 8]
    fit = fit_sweep(sources, finite_group=False, noise_drag=False)
    other_batch = transfer(sources, {"lr": 0.01, "group_size": 8, "batch": 16, "seed": 0},
                           fit=fit, steps=STEPS - 1, draws=0, cross_validate=False)
    assert other_batch["shared_prompts"]["status"].startswith("not used: no source run")
    assert other_batch["shared_prompts"]["beta"] is None
    no_seed = transfer(sources, {"lr": 0.01, "group_size": 8, "batch": 8}, fit=fit,
                       steps=STEPS - 1, draws=0, cross_validate=False)
    assert "seed or batch is not given" in no_seed["shared_prompts"]["status"]
