"""The share of completions truncated at the length cap, and the cap itself, read from logs.

TRL logs the truncated share as ``completions/clipped_ratio`` (its ``clip_ratio/*`` keys are the
PPO ratio's clipping), verl as ``response_length/clip_ratio`` (``actor/pg_clipfrac`` is the
PPO clipping); the cap is a setting (TRL ``max_completion_length``, verl
``data.max_response_length``). Excerpts of two public logs (tests/data/real_logs) and seeded
synthetic runs; the categorical simulator writes what TRL writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.config import meta_from_config
from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta

REAL = Path(__file__).parent / "data" / "real_logs"
TRL = REAL / ("lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
              "checkpoint-1200_trainer_state.excerpt.json")
VERL = REAL / ("jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251203_214315-"
               "cr3q4lay_files_output.excerpt.log")


def test_trl_clipped_ratio_is_the_truncated_share_not_the_ppo_clipping() -> None:
    run = load_run(TRL)
    assert run.metric_keys["clipped_share"] == "completions/clipped_ratio"
    history = json.loads(TRL.read_text())["log_history"]
    logged = {e["step"]: e["completions/clipped_ratio"] for e in history if "reward" in e}
    assert np.allclose(run.metrics["clipped_share"], [logged[s] for s in run.steps])
    assert run.metrics["clipped_share"][run.steps == 320][0] == pytest.approx(0.3375)
    assert not any(key.startswith("clip_ratio/") for key in run.metric_keys.values())


def test_verl_clip_ratio_is_the_truncated_share_not_pg_clipfrac() -> None:
    run = load_run(VERL)
    assert run.metric_keys["clipped_share"] == "response_length/clip_ratio"
    assert run.metrics["clipped_share"][0] == pytest.approx(0.001953125)  # step 1
    assert run.metrics["clipped_share"][-1] == pytest.approx(0.02734375)
    assert "actor/pg_clipfrac" not in run.metric_keys.values()


def test_the_cap_is_read_from_training_args_and_from_a_verl_config(tmp_path) -> None:
    history = [{"step": s, "reward": 0.1 * s, "completions/mean_length": 200.0 + s}
               for s in range(1, 13)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    (tmp_path / "training_args.json").write_text(json.dumps({"max_completion_length": 512}))
    meta = load_run(tmp_path / "trainer_state.json").meta
    assert meta.length_cap.value == 512 and meta.length_cap.source == "file:training_args.json"
    assert meta.to_dict()["length_cap"]["value"] == 512
    verl = meta_from_config({"data": {"max_prompt_length": 1024, "max_response_length": 3072}},
                            "file:config.yaml", "config.yaml")
    assert verl.length_cap.value == 3072
    assert meta_from_config({"critic": {"max_response_length": 99}}, "file:x", "x").length_cap \
        is None  # another model's setting is not the policy's


def _declining(n: int = 60, *, seed: int = 0) -> Run:
    """A reward that rises for 30 steps and falls, the truncated share rising with the fall."""
    rng = np.random.default_rng(seed)
    t = np.arange(1.0, n + 1)
    reward = np.where(t <= 30, 0.3 + 0.015 * t, 0.75 - 0.02 * (t - 30)) + rng.normal(0, 0.01, n)
    share = np.where(t <= 30, 0.02, 0.02 + 0.025 * (t - 30)) + rng.normal(0, 0.005, n)
    length = np.where(t <= 30, 400.0, 400 + 18 * (t - 30)) + rng.normal(0, 5, n)
    return Run("declining", "test", t, reward, {"clipped_share": np.clip(share, 0, 1),
                                                "completion_length": length})


def test_the_diagnosis_names_the_cap_in_a_decline_the_truncated_share_follows() -> None:
    run = _declining()
    result = diagnose(run)
    assert result.state == "declining"
    note = [n for n in result.notes if "truncated at the length cap" in n]
    assert len(note) == 1 and "rose from 4% around the peak (step 30) to 60% late" in note[0]
    steady = Run(run.source, run.format, run.steps, run.reward,
                 {"clipped_share": np.full(run.n_points, 0.02),
                  "completion_length": np.full(run.n_points, 400.0)})
    assert not any("length cap" in n for n in diagnose(steady).notes)


def test_without_the_share_a_known_cap_near_the_late_length_is_named() -> None:
    run = _declining()
    bare = {"completion_length": run.metrics["completion_length"]}
    capped = Run(run.source, run.format, run.steps, run.reward, bare,
                 meta=RunMeta(length_cap=Hyperparameter(960, "user", "given")))
    assert any("within 25% of its level below the length cap 960" in n
               for n in diagnose(capped).notes)
    far = Run(run.source, run.format, run.steps, run.reward, bare,
              meta=RunMeta(length_cap=Hyperparameter(4096, "user", "given")))
    assert not any("length cap" in n for n in diagnose(far).notes)


def test_the_simulator_writes_what_trl_writes(categorical, tmp_path) -> None:
    config = categorical.settings("length_collapse", 408)
    log, _ = categorical.simulate(config, seed=408)
    full = load_run(categorical.write_run(tmp_path / "full", log, config=config, keys="full",
                                          with_g=True, label="x", seed=408))
    assert full.metric_keys["clipped_share"] == "completions/clipped_ratio"
    assert full.meta.length_cap.value == 1024
    assert full.meta.length_cap.source == "file:training_args.json"
    short = load_run(categorical.write_run(tmp_path / "short", log, config=config,
                                           keys="reward_only", with_g=False, label="x", seed=408))
    assert "clipped_share" not in short.metrics and short.meta.length_cap is None
