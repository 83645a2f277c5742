"""The third source of labelled runs: public logs, labelled from what their sources document.

Each row of :data:`OUTCOMES` names a file of the public log corpus (the folder given to
:func:`score_public_logs`, such as ``shared/data/real_logs``: its second set, described in the
corpus's manifest; excerpts in tests/data/real_logs/README.md), the documented outcome and where
the label comes from. Outcomes are coarse, because that is all the documentation says:
``declines`` (the reward collapsed or fell back), ``learns`` (rose or held a level; no failure
reported), ``flat`` (never learned). Labels read from the manifest's automatic curve shape are
marked as such: that column is a heuristic over eight
chunk means, weaker than the caveats written by hand.

A diagnosis agrees with ``declines`` when its state is ``declining`` or its primary mode is an
instability; with ``flat`` when its state is ``not_learning``; with ``learns`` when no mode is
flagged and its state is ``learning`` or ``converged``. A ``too_short`` state agrees with none:
it abstains and is counted as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grpodyn.empirical.diagnostics.diagnose import Diagnosis, diagnose
from grpodyn.empirical.logs.loaders import LogFormatError, load_run

__all__ = ["Outcome", "OUTCOMES", "outcome_of", "score_public_logs"]

_CAVEAT = "MANIFEST.md caveats ('collapsed / degenerate curves are deliberate members')"
_SHAPE = "MANIFEST.md curve shape (automatic, from octile means)"
_SHIBUKI = "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_"


@dataclass(frozen=True)
class Outcome:
    """One public log's documented outcome and where the label comes from."""

    file: str
    outcome: str  # declines, learns or flat
    source: str
    note: str = ""
    logging_steps: int | None = None  # for console logs without steps: one step per dict


OUTCOMES: tuple[Outcome, ...] = (
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e8_tb256_metrics.jsonl", "declines",
            _CAVEAT, "collapses to 0 (8 epochs per rollout)"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e16_tb256_metrics.jsonl", "declines",
            _CAVEAT, "collapses to 0 (16 epochs per rollout)"),
    Outcome(_SHIBUKI + "grpo_off_policy_clip_ablation_runs_GRPO-No-Clip_(e2_tb256)_metrics.jsonl",
            "declines", _CAVEAT, "collapses to 0 without clipping"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e2_tb32_metrics.jsonl", "learns",
            _SHAPE, "noisy rise 0.18 -> 0.62"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e2_tb64_metrics.jsonl", "learns",
            _SHAPE, "monotone rise 0.19 -> 0.66"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e2_tb128_metrics.jsonl", "learns",
            _SHAPE, "monotone rise 0.17 -> 0.69"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e2_tb256_metrics.jsonl", "learns",
            _SHAPE, "monotone rise 0.11 -> 0.58"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e4_tb128_metrics.jsonl", "learns",
            _SHAPE, "noisy rise 0.22 -> 0.63"),
    Outcome(_SHIBUKI + "grpo_off_policy_sweep_runs_broad_e4_tb256_metrics.jsonl", "learns",
            _SHAPE, "noisy rise 0.20 -> 0.60"),
    Outcome(_SHIBUKI + "grpo_off_policy_clip_ablation_runs_GRPO-Clip_0.20_0.20_(e2_tb256)_"
            "metrics.jsonl", "learns", _SHAPE, "monotone rise 0.45 -> 0.75"),
    Outcome(_SHIBUKI + "grpo_off_policy_clip_ablation_runs_GRPO-Clip_0.20_0.28_(e2_tb256)_"
            "metrics.jsonl", "learns", _SHAPE, "noisy rise 0.40 -> 0.69"),
    Outcome(_SHIBUKI + "grpo_baselines_runs_reinforce_with_baseline_metrics.jsonl", "learns",
            _SHAPE, "noisy rise 0.40 -> 0.77"),
    Outcome(_SHIBUKI + "grpo_length_normalization_runs_batch_token_mean_metrics.jsonl",
            "learns", _SHAPE, "noisy rise 0.35 -> 0.75"),
    Outcome(_SHIBUKI + "grpo_length_normalization_runs_masked_normalize_metrics.jsonl",
            "learns", _SHAPE, "monotone rise 0.26 -> 0.74"),
    Outcome(_SHIBUKI + "grpo_group_standard_deviation_runs_no_std_normalization_metrics.jsonl",
            "learns", _SHAPE, "noisy rise 0.39 -> 0.78"),
    Outcome(_SHIBUKI + "grpo_train_loop_runs_grpo_on_policy_lr1e-5_metrics.jsonl", "learns",
            _SHAPE, "monotone rise 0.20 -> 0.56"),
    Outcome("Rusheel86__Chaos-Economy__trainer_state.json", "declines", _SHAPE,
            "rise then collapse 0.39 -> 0.91 -> 0.20"),
    Outcome("JuncyLu__trl_DAPO__training_logs_20251022_120531_run_terminal.md", "declines",
            _SHAPE, "decline of a summed reward 2.77 -> 2.26"),
    Outcome("jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251129_221801-i80f2v90_"
            "files_output.log", "flat", _CAVEAT, "sits at -1.0"),
    Outcome("josephdutoit__probability-aligned-llms__logs_grpo.log", "flat", _CAVEAT,
            "about -1 throughout"),
    Outcome("Coicozoi__minimind-from-scratch__logs_grpo.log", "flat", _CAVEAT,
            "flat and noisy (9751 steps)"),
    Outcome("Ning-Guo__hotpotqa-agent__logs_grpo.log", "flat", _SHAPE,
            "flat 0.66 -> 0.69 (steps are the ordinal of the logged dicts)", logging_steps=1),
)


def outcome_of(diagnosis: Diagnosis) -> str:
    """Map a diagnosis onto the coarse outcomes of the documentation.

    ``declines``, ``flat``, ``learns``, or ``abstains`` when too short, ``failure`` for a mode
    flagged on a run that neither fell nor stayed flat.
    """
    if diagnosis.state == "too_short":
        return "abstains"
    if diagnosis.state == "declining" or diagnosis.primary == "dynamical_instability":
        return "declines"
    if diagnosis.state == "not_learning":
        return "flat"
    return "learns" if diagnosis.primary is None else "failure"


def score_public_logs(folder: str | Path) -> dict:
    """Diagnose every labelled public log in ``folder`` and score the documented outcomes.

    Rows whose file is missing or unreadable are listed, not scored.
    """
    rows, agree, scored = [], 0, 0
    for item in OUTCOMES:
        path = Path(folder) / item.file
        row = {"file": item.file, "documented": item.outcome, "label_source": item.source,
               "note": item.note}
        try:
            options = {"logging_steps": item.logging_steps} if item.logging_steps else {}
            diagnosis = diagnose(load_run(path, **options))
        except (OSError, LogFormatError, ValueError) as exc:
            rows.append({**row, "called": None, "error": str(exc).splitlines()[0]})
            continue
        called = outcome_of(diagnosis)
        scored += 1
        agree += called == item.outcome
        rows.append({**row, "called": called, "primary": diagnosis.primary,
                     "state": diagnosis.state, "agrees": called == item.outcome})
    return {"agreement": agree / scored if scored else float("nan"), "scored": scored,
            "by_label_source": _by_label_source(rows), "per_class": _per_class(rows),
            "rows": rows}


def _by_label_source(rows: list[dict]) -> dict[str, dict]:
    """Score agreement apart for the two kinds of label.

    ``documented``: written by hand (MANIFEST caveats); ``heuristic``: the automatic curve
    shape, weaker evidence.
    """
    out = {}
    for kind, source in (("documented", _CAVEAT), ("heuristic", _SHAPE)):
        scored = [row for row in rows if row["label_source"] == source and row["called"]]
        agree = sum(row["agrees"] for row in scored)
        out[kind] = {"agreement": agree / len(scored) if scored else float("nan"),
                     "agree": agree, "scored": len(scored)}
    return out


def _per_class(rows: list[dict]) -> dict[str, dict]:
    """Score precision and recall of each documented outcome (NaN where undefined)."""
    scored = [row for row in rows if row["called"]]
    out = {}
    for outcome in ("declines", "learns", "flat"):
        hits = sum(row["documented"] == outcome and row["called"] == outcome for row in scored)
        called = sum(row["called"] == outcome for row in scored)
        actual = sum(row["documented"] == outcome for row in scored)
        out[outcome] = {"precision": hits / called if called else float("nan"),
                        "recall": hits / actual if actual else float("nan"), "n": actual}
    return out
