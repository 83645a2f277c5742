"""The deep-network demonstration: the GRPO loop against TRL, and a small version of each step."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from deepnet_study import forecast, sweeps  # noqa: E402

from grpodyn.empirical.deepnet import grpo, measure  # noqa: E402
from grpodyn.empirical.tinylm.training import build_model  # noqa: E402

from .deepnet_support import score_half_of_every_group, untrained_70k  # noqa: E402


@pytest.fixture(scope="module")
def tiny() -> tuple:
    """Build an untrained 70k model (eager attention) and the tokenizer."""
    return untrained_70k()


def _batch(model: object, tokenizer: object, seed: int = 0, prompts: int = 6) -> grpo.Batch:
    return grpo.sample_batch(model, tokenizer, batch=prompts, group_size=4,
                             rng=random.Random(seed),
                             generator=torch.Generator().manual_seed(seed))


def _trl_trainer(model: object, tokenizer: object, tmp_path: object, kl: float) -> object:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    path = tmp_path / "model"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=8,
                      num_generations=4, max_completion_length=4, beta=kl, report_to=[],
                      use_cpu=True, bf16=False, logging_steps=1, max_steps=1,
                      disable_tqdm=True)  # float32 throughout: the loop computes in float32
    trainer = GRPOTrainer(model=str(path), reward_funcs=[lambda completions, **_: [0.0] * len(
        completions)], args=args, train_dataset=Dataset.from_dict({"prompt": ["1+2="] * 8}),
        processing_class=tokenizer)
    trainer.current_gradient_accumulation_steps = 1
    trainer.model.train()
    return trainer


def test_trl_defaults_are_the_loss_we_implement() -> None:
    """The loop implements TRL's default GRPO loss: dapo, clip 0.2, group-scaled advantages."""
    from trl import GRPOConfig

    config = GRPOConfig(output_dir="unused", report_to=[], use_cpu=True)
    assert config.loss_type == "dapo"
    assert config.epsilon == pytest.approx(0.2)
    assert config.scale_rewards in ("group", True)
    assert config.importance_sampling_level == "token"


def test_advantages_match_trl_formula() -> None:
    """Group advantages equal TRL's (r - mean) / (nanstd + 1e-4), incl. degenerate groups."""
    from trl.trainer.utils import nanstd

    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    grouped = rewards.view(-1, 4)
    mean = grouped.mean(1).repeat_interleave(4)
    std = nanstd(grouped, dim=1).repeat_interleave(4)
    expected = (rewards - mean) / (std + 1e-4)
    assert torch.allclose(grpo.group_advantages(rewards, 4), expected, atol=1e-7)


@pytest.mark.parametrize("kl", [0.0, 0.04])
def test_loss_and_gradient_match_trl_compute_loss(tiny: tuple, tmp_path: object,
                                                  kl: float) -> None:
    """Our loss and its gradient equal GRPOTrainer._compute_loss on one fixed off-policy batch."""
    model, tokenizer = tiny
    batch = _batch(model, tokenizer)
    batch.rewards = torch.tensor([1.0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0] * 2)
    with torch.no_grad():  # an older policy: importance ratios and clipping are exercised
        batch.old_logps = grpo.token_logps(model, batch.prompt_ids, batch.completion_ids) + (
            0.3 * torch.randn(batch.completion_ids.shape, generator=torch.Generator()
                              .manual_seed(1)))
    trainer = _trl_trainer(model, tokenizer, tmp_path, kl)
    reference = build_model(seed=4, **grpo.SIZES["70k"])
    reference.set_attn_implementation("eager")
    inputs = {"prompt_ids": batch.prompt_ids, "prompt_mask": torch.ones_like(batch.prompt_ids),
              "completion_ids": batch.completion_ids, "completion_mask": batch.completion_mask,
              "advantages": batch.advantages, "old_per_token_logps": batch.old_logps,
              "num_items_in_batch": batch.completion_mask.sum()}
    if kl:
        with torch.no_grad():
            inputs["ref_per_token_logps"] = grpo.token_logps(reference, batch.prompt_ids,
                                                             batch.completion_ids)
    theirs = trainer._compute_loss(trainer.model, inputs)
    ours = grpo.grpo_loss(model, batch, kl=kl, reference=reference)
    assert float(ours.detach()) == pytest.approx(float(theirs.detach()), rel=1e-5, abs=1e-7)
    g_theirs = torch.autograd.grad(theirs, list(trainer.model.parameters()))
    g_ours = torch.autograd.grad(ours, list(model.parameters()))
    for a, b in zip(g_ours, g_theirs, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)


def test_sampler_masks_after_eos_and_scores(tiny: tuple) -> None:
    """Completions are masked after the first eos and rewarded by exact match."""
    model, tokenizer = tiny
    batch = _batch(model, tokenizer, prompts=8)
    eos = batch.completion_ids == 2
    first = torch.where(eos.any(1), eos.int().argmax(1), torch.tensor(eos.shape[1]))
    for row, f in zip(batch.completion_mask, first, strict=True):
        assert row[:f + 1].all() and not row[f + 1:].any()
    assert set(batch.rewards.tolist()) <= {0.0, 1.0}


def test_hold_applies_the_refresh_gradient_unchanged(tiny: tuple) -> None:
    """Sample-and-hold with lr and no momentum moves the weights by K identical steps."""
    import copy

    model, tokenizer = tiny
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    grpo.run(a, tokenizer, grpo.RunSettings(lr=0.05, refresh=3, steps=3, batch=4))
    grpo.run(b, tokenizer, grpo.RunSettings(lr=0.15, refresh=1, steps=1, batch=4))
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-6)


def test_staleness_delays_the_force(tiny: tuple) -> None:
    """With staleness d nothing moves during the first d steps."""
    import copy

    model, tokenizer = tiny
    a = copy.deepcopy(model)
    out = grpo.run(a, tokenizer, grpo.RunSettings(lr=0.1, staleness=2, steps=2, batch=4))
    assert out["update_norm"] == [0.0, 0.0]


def test_lanczos_finds_the_top_eigenvalue_of_a_known_matrix() -> None:
    """Lanczos on a diagonal operator returns its largest entries and a small residual."""
    diag = torch.tensor(np.r_[np.linspace(-1, 1, 60), 3.0, 5.0], dtype=torch.float32)
    values, vector, residual = measure.lanczos_top(lambda v: diag * v, diag.numel(),
                                                   iterations=40)
    assert values[0] == pytest.approx(5.0, rel=1e-4)
    assert values[1] == pytest.approx(3.0, rel=1e-3)
    assert residual < 1e-3
    assert abs(float(vector[-1])) == pytest.approx(1.0, rel=1e-3)


def test_hvp_is_symmetric_and_matches_finite_difference(tiny: tuple) -> None:
    """u.Hv = v.Hu, and Hv equals the finite difference of the gradient of Phi."""
    model, tokenizer = tiny
    batch = _batch(model, tokenizer, prompts=4)
    batch.rewards = torch.tensor([1.0, 0, 0, 1] * 4)
    hvp, grad = measure.hvp_operator(model, [batch])
    gen = torch.Generator().manual_seed(0)
    u, v = torch.randn(grad.numel(), generator=gen), torch.randn(grad.numel(), generator=gen)
    assert float(u @ hvp(v)) == pytest.approx(float(v @ hvp(u)), rel=1e-3, abs=1e-5)


def test_fit_kappa_recovers_a_line() -> None:
    """D = kappa (r* - r) through exact points gives kappa and r*."""
    points = [{"reward": r, "drift": 0.5 * (0.8 - r), "drift_se": 0.01} for r in (0.1, 0.2, 0.4)]
    fit = measure.fit_kappa(points)
    assert fit["kappa"] == pytest.approx(0.5)
    assert fit["plateau"] == pytest.approx(0.8)


def test_predictions_follow_the_jury_limit() -> None:
    """lr_max = 2 (1 + momentum) / h_max; tau = (1 - momentum) / (lr kappa)."""
    measured = {"spectrum": {"top_eigenvalues": [20.0, 5.0], "top_cross_validated": 10.0},
                "kappa_fit": {"kappa": 0.5}, "kappa_from_curvature_along_update": 4.0,
                "critical_lr": {"value": 0.8}}
    items = forecast.predict_model("m", measured)
    lr_max = {i["setting"]["momentum"]: i["value"] for i in items if i["quantity"] == "lr_max"}
    assert lr_max[0.0] == pytest.approx(0.1) and lr_max[0.9] == pytest.approx(0.19)
    tau = next(i["value"] for i in items if i["quantity"] == "relaxation_time"
               and i["setting"] == {"lr": 0.1, "momentum": 0.0})
    assert tau == pytest.approx(1 / (0.1 * 0.5))
    critical = next(i for i in items if i["quantity"] == "refresh_max_critical")
    assert critical["setting"]["lr"] == 0.1  # 0.8 / 8
    assert critical["value"] == 7  # k = 0.1 * 2 / 0.8 = 0.25: first unstable K = 2 / k = 8
    keys = {(i["quantity"], json.dumps(i["setting"], sort_keys=True)) for i in items}
    assert len(keys) == len(items)


def test_observe_and_compare_small(tiny: tuple, tmp_path: object) -> None:
    """A small version of run -> observe -> compare on synthetic run records."""
    steps = 40
    n = np.arange(steps)
    records = []
    for lr in forecast.LR_GRID:
        for seed in range(3):
            reward = (0.9 - 0.8 * np.exp(-n * lr / 2)).tolist() if lr < 0.5 else [0.3] * 10 + [
                0.0] * (steps - 10)
            records.append({"setting": {"sweep": "lr", "lr": lr, "momentum": 0.0},
                            "seed": seed, "unstable": sweeps.is_unstable(
                                {"finite": True, "reward": reward}), "reward": reward})
    items = sweeps.observe("m", records, steps)
    lr_max = next(i for i in items if i["quantity"] == "lr_max")
    assert lr_max["value"] == 0.4
    tau = next(i for i in items if i["quantity"] == "relaxation_time"
               and i["setting"]["lr"] == 0.2)
    assert tau["value"] == pytest.approx(10.0, rel=0.05)
    assert sweeps.within_target("lr_max", 0.5, 0.4, list(forecast.LR_GRID)) is True
    assert sweeps.within_target("lr_max", 1.7, 0.4, list(forecast.LR_GRID)) is False


def test_compare_joins_on_model_quantity_setting_and_section_reports(tmp_path: object) -> None:
    """Compare writes one row per prediction with an observation; the report reads it."""
    from grpodyn.claims import evaluate
    from grpodyn.empirical.deepnet.section import comparison_data

    grid = list(forecast.LR_GRID)
    predictions = {"commit": "abc", "items": [
        {"model": "m", "quantity": "lr_max", "setting": {"momentum": 0.0}, "value": 0.45},
        {"model": "m", "quantity": "lr_max_critical", "setting": {"momentum": 0.0},
         "value": 1.6},
        {"model": "m", "quantity": "refresh_max", "setting": {"lr": 0.1, "momentum": 0.0,
                                                              "mode": "reuse"},
         "value": None, "status": "no threshold"},
        {"model": "m", "quantity": "staleness_max", "setting": {"lr": 0.1, "momentum": 0.0},
         "value": 3}]}
    observations = {"items": [
        {"model": "m", "quantity": "lr_max", "setting": {"momentum": 0.0}, "value": 0.4,
         "grid": grid},
        {"model": "m", "quantity": "refresh_max", "setting": {"lr": 0.1, "momentum": 0.0,
                                                              "mode": "reuse"},
         "value": None, "status": "no threshold on the grid"}]}
    (tmp_path / "predictions.json").write_text(json.dumps(predictions))
    rows = sweeps.join(predictions["items"], observations["items"])
    verdict = {r["quantity"]: r["within_target"] for r in rows}
    assert verdict == {"lr_max": True, "lr_max_critical": False, "refresh_max": True}
    (tmp_path / "comparison.json").write_text(json.dumps({"rows": rows}))
    checks = evaluate("deep network", comparison_data(tmp_path))
    # one ledger row per question judged on its route; the critical lr is a later route
    ledger = {c.key: c.agrees for c in checks if not c.study}
    assert ledger == {"deepnet_lr_max": True, "deepnet_reuse": True}
    study = [c for c in checks if c.study]
    assert [(c.key, c.agrees) for c in study] == [("deepnet_lr_max", False)]
    assert all(c.note and "abc" in c.note for c in checks)
    assert not any(c.reason for c in checks)  # agreeing ledger rows, and study rows


def test_cli_bad_input_exits_2(tmp_path: object, capsys: object) -> None:
    """A missing measurement file is a one-line error with exit code 2."""
    from deepnet_study.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["predict", "--sizes", "70k", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("error:")


def test_measure_small(tiny: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small version of the measure step: spectrum, drift, critical lr."""
    model, tokenizer = tiny
    spectrum = measure.curvature_spectrum(model, tokenizer, replicates=2, prompts=4,
                                          group_size=4, iterations=4)
    # the untrained model scores 0 everywhere: no update direction, said so (not 0/0)
    assert spectrum["curvature_along_update"] is None
    score_half_of_every_group(monkeypatch)
    spectrum = measure.curvature_spectrum(model, tokenizer, replicates=2, prompts=4,
                                          group_size=4, iterations=4)
    tops = spectrum["top_eigenvalues"]
    assert len(tops) == 3 and tops[0] >= tops[1] >= tops[2]
    assert np.isfinite(spectrum["top_cross_validated"])
    assert np.isfinite(spectrum["curvature_along_update"])
    assert spectrum["top_vector"].norm() == pytest.approx(1.0, rel=1e-4)
    point = measure.drift_point(model, tokenizer, replicates=2, prompts=4, group_size=4)
    assert point["reward"] == 0.5 and np.isfinite(point["drift"])
    rows = [{"lr": 0.1, "measured": 0.01, "measured_se": 0.001},
            {"lr": 0.2, "measured": -0.001, "measured_se": 0.001},
            {"lr": 0.4, "measured": -0.05, "measured_se": 0.01}]
    assert measure.critical_lr(rows) == {"value": 0.2, "first_losing_lr": 0.4}


def test_soft_measurement_small(tiny: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small version of the soft step: the mean-update curvature on the tiny model."""
    model, tokenizer = tiny
    score_half_of_every_group(monkeypatch)
    out = measure.mean_update_curvature(model, tokenizer, replicates=4, prompts=4, group_size=4)
    assert np.isfinite(out["curvature"]) and out["curvature_se"] >= 0
    # mean over pairs of g_i . g_j lies in [-1/(n-1), 1] x mean |g_i|^2 (n = 4 replicates)
    assert -1 / 3 - 1e-9 <= out["signal_fraction"] <= 1 + 1e-9 and out["completions"] == 16
