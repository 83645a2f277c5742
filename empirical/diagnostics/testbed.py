"""A labelled test bed of GRPO runs with each failure mode induced on purpose.

Bandit runs (numpy only, seconds): the softmax bandit of
:mod:`grpodyn.empirical.bandit.simulation` with

- healthy: a KL pull strong enough to hold the plateau below 1 (entropy kept);
- reward hacking: the rewarded arm is a proxy; the true reward of an answer is 0.3 on the
  rewarded arm and 0.7 on the other, so the held-out (true) reward falls as the proxy rises;
- advantage degeneracy: G = 2 on an easy task (start at p = 0.88): most groups are all-correct;
- policy concentration: no KL and a high learning rate: the policy collapses onto one arm;
- dynamical instability: a refresh interval past the threshold of section 5 (sample-and-hold),
  a sustained oscillation of the reward.

Every run logs what TRL logs plus a held-out reward (a fresh evaluation of 256 answers every 10
steps). :func:`evaluate` scores :func:`~grpodyn.empirical.diagnostics.diagnose.diagnose` and the
simple threshold rules on the same runs (confusion matrix, per-mode precision and recall).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grpodyn.empirical.bandit.simulation import BanditConfig, simulate_bandit
from grpodyn.empirical.data_paths import study_folder, study_path
from grpodyn.empirical.diagnostics.diagnose import (
    CEILING,
    MODES,
    NEGLIGIBLE_RISE,
    Diagnosis,
    diagnose,
    threshold_rules,
)
from grpodyn.empirical.logs.loaders import Hyperparameter, Run, RunMeta, load_run

__all__ = ["LABELS", "LabelledRun", "bandit_testbed", "tiny_testbed", "pool_testbed",
           "evaluate", "evaluate_sources", "called", "TINY_TESTBED_DIR", "TUNING_SEEDS",
           "HELDOUT_SEEDS", "POOL_DESIGN_SEEDS", "MATRIX_CLASSES", "UNDETERMINED",
           "outcome_label"]

LABELS = ("healthy", *MODES)
TINY_TESTBED_DIR = study_path("tiny_grids", "tiny_testbed")
#: seeds of the tiny-model runs the diagnosis was designed on: 0-4 for the first design;
#: 5-14, 15-34 and 35-39 were each a held-out check that a design failed, and then served the
#: design that followed (studies/tiny_grids/findings.md, section 4)
TUNING_SEEDS = range(0, 40)
#: fresh seeds made while the diagnosis was frozen: the independent check
HELDOUT_SEEDS = range(40, 50)
#: seeds of the prompt-pool simulator the diagnosis was designed on; every other seed is fresh
#: (made after the diagnosis was frozen)
POOL_DESIGN_SEEDS = range(0, 10)
#: classes of the source-by-source matrix: no failure (learning or converged), not learning,
#: the four modes, and a decline whose cause is unknown
MATRIX_CLASSES = ("healthy", "not_learning", *MODES, "declining")
_EVAL_EVERY, _EVAL_SAMPLES = 10, 256
SEVERAL = "several"  # more than one threshold rule fired
#: the diagnosis abstained: a mode the log points to but cannot confirm (a miss for every
#: class, not a flag)
UNDETERMINED = "undetermined"


@dataclass(frozen=True)
class LabelledRun:
    """A run with the class it was made to show and a name."""

    label: str
    name: str
    run: Run


def _bandit_case(label: str, seed: int, steps: int) -> LabelledRun:
    variant = seed % 3
    if label == "healthy":
        config = BanditConfig(lr=(0.2, 0.3, 0.4)[variant], momentum=(0.0, 0.5, 0.0)[variant],
                              group_size=(8, 16, 32)[variant], prompts=8, kl=0.5)
        x0 = -1.5
    elif label == "reward_hacking":
        config = BanditConfig(lr=(0.2, 0.3, 0.4)[variant], group_size=(8, 16, 8)[variant],
                              prompts=8, kl=0.5)
        x0 = -1.5
    elif label == "advantage_degeneracy":
        config = BanditConfig(lr=(0.05, 0.03, 0.08)[variant], group_size=2, prompts=8, kl=0.0)
        x0 = 2.0
    elif label == "policy_concentration":
        config = BanditConfig(lr=(3.0, 2.0, 4.0)[variant], group_size=8, prompts=8, kl=0.0)
        x0 = -1.5
    elif label == "dynamical_instability":
        config = BanditConfig(lr=(0.6, 0.5, 0.6)[variant], group_size=32, prompts=8, kl=1.0,
                              refresh=(16, 20, 14)[variant])
        x0 = -1.5
    else:
        raise ValueError(f"unknown label {label!r}")
    sim = simulate_bandit(config, steps=steps, seeds=1, seed=1000 * LABELS.index(label) + seed,
                          x0=x0)
    p = sim.p[1:, 0]
    true_p = 0.3 * p + 0.7 * (1 - p) if label == "reward_hacking" else p
    rng = np.random.default_rng(seed + 17)
    held = np.full(steps, np.nan)
    at = np.arange(_EVAL_EVERY - 1, steps, _EVAL_EVERY)
    held[at] = rng.binomial(_EVAL_SAMPLES, true_p[at]) / _EVAL_SAMPLES
    metrics = {k: v[:, 0] for k, v in sim.metrics.items() if k != "reward"}
    metrics["heldout_reward"] = held
    run = Run(source=f"bandit:{label}:{seed}", format="bandit",
              steps=np.arange(1, steps + 1, dtype=float), reward=sim.metrics["reward"][:, 0],
              metrics=metrics, meta=RunMeta(
                  group_size=Hyperparameter(config.group_size, "logged", "simulated config"),
                  lr=Hyperparameter(config.lr, "logged", "simulated config")))
    return LabelledRun(label, f"bandit_{label}_{seed}", run)


def bandit_testbed(*, seeds: int = 5, steps: int = 400) -> list[LabelledRun]:
    """``seeds`` bandit runs per label (healthy and the four modes)."""
    return [_bandit_case(label, seed, steps) for label in LABELS for seed in range(seeds)]


def tiny_testbed(folder: str | Path = TINY_TESTBED_DIR, *,
                 seeds: range | None = None) -> list[LabelledRun]:
    """Load the shipped tiny-model TRL runs (made by ``make_tiny_testbed``).

    All of them, or those of ``seeds`` (:data:`TUNING_SEEDS`, :data:`HELDOUT_SEEDS`).
    """
    cases = []
    for path in sorted(study_folder(folder).glob("*.json")):
        content = json.loads(path.read_text())
        if seeds is not None and content["grpodyn_settings"]["seed"] not in seeds:
            continue
        cases.append(LabelledRun(content["label"], f"tiny_{path.stem}", load_run(path)))
    return cases


def outcome_label(family: str, success: np.ndarray, *, steps: int) -> str:
    """Label a prompt-pool run by what it did, from the simulator's own ground truth.

    The rule was written before any run was scored under it. ``success``
    holds (step, exact success rate of the training pool) rows
    (:func:`~grpodyn.empirical.diagnostics.prompt_pool_sim.simulate_pool_outcome`); the start
    is its first row, the end the mean of the rows in the last quarter of the ``steps``.

    - ``healthy``, ``converged`` and ``not_learning`` settings: ``not_learning`` when the pool's
      success rate moved less than :data:`~grpodyn.empirical.diagnostics.diagnose.NEGLIGIBLE_RISE`
      (no mode can be judged from such a change: the run was flat from the start), else
      ``healthy`` (learning or converged: no failure);
    - ``policy_concentration`` settings: ``healthy`` when the pool ends at or above
      :data:`~grpodyn.empirical.diagnostics.diagnose.CEILING` (a policy locked onto right
      answers has converged: no failure), else ``policy_concentration``;
    - every other family keeps its name (hacking, degeneracy and instability are mechanisms
      whose outcome the simulator's settings fix).

    Parameters
    ----------
    family : str
        The settings family (one of ``prompt_pool_sim.SIM_LABELS``).
    success : ndarray, shape (m, 2)
        Steps and exact pool success rates.
    steps : int
        Length of the run (steps).

    Returns
    -------
    str
        A class of :data:`MATRIX_CLASSES`.
    """
    start = float(success[0, 1])
    end = float(np.mean(success[success[:, 0] > 0.75 * steps, 1]))
    if family in ("healthy", "converged", "not_learning"):
        return "not_learning" if abs(end - start) < NEGLIGIBLE_RISE else "healthy"
    if family == "policy_concentration":
        return "healthy" if end >= CEILING else family
    return family


def pool_testbed(*, seeds: range = POOL_DESIGN_SEEDS, folder: str | Path | None = None,
                 variant: bool = False, log_format: str = "trl") -> list[LabelledRun]:
    """Make prompt-pool simulator runs, one per label and seed.

    Made by :mod:`grpodyn.empirical.diagnostics.prompt_pool_sim`, written as a user's log would
    be and read back by
    :func:`~grpodyn.empirical.logs.loaders.load_run` (G and B read or inferred, eval entries
    merged). Each run is labelled by :func:`outcome_label` from the simulator's own ground
    truth; its name keeps the settings family it was drawn from.

    Parameters
    ----------
    seeds : range
        Seeds per label (offset by 10 000 per label; 20 000 in the variant bed).
    folder : str or Path, optional
        Where the logs are written (default: a temporary folder).
    variant : bool
        Use :func:`~grpodyn.empirical.diagnostics.prompt_pool_sim.variant_settings` (the bed made
        after the diagnosis was frozen: other pool, batch and length, stale Adam,
        sample-and-hold instability).
    log_format : str
        ``"trl"`` (``trainer_state.json``) or ``"verl"`` (verl's console, without the
        zero-std share).

    Returns
    -------
    list of LabelledRun
    """
    import tempfile

    from grpodyn.empirical.diagnostics.prompt_pool_sim import (
        SIM_LABELS,
        case_settings,
        simulate_pool_outcome,
        variant_settings,
        write_trainer_state,
        write_verl_console,
    )

    if log_format not in ("trl", "verl"):
        raise ValueError(f"log_format: {log_format!r} is neither 'trl' nor 'verl'")
    settings, offset = (variant_settings, 20_000) if variant else (case_settings, 10_000)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(folder) if folder is not None else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        cases = []
        for label in SIM_LABELS:
            for seed in seeds:
                config = settings(label, seed)
                log, success = simulate_pool_outcome(
                    config, seed=offset * SIM_LABELS.index(label) + seed)
                name = f"pool{'_variant' if variant else ''}_{label}_{seed}"
                if log_format == "trl":
                    path = write_trainer_state(out / f"{name}.json", log, label=label,
                                               seed=seed, config=config)
                else:
                    path = write_verl_console(out / f"{name}.log", log, config=config)
                cases.append(LabelledRun(outcome_label(label, success, steps=config.steps),
                                         name, load_run(path)))
    return cases


def called(diagnosis: Diagnosis) -> str:
    """Return the class a diagnosis calls a run: its primary mode, else its state.

    Learning and converged are both ``healthy`` (no failure); :data:`UNDETERMINED` when no mode
    is flagged but one is undecided (the diagnosis abstains: a miss, never a hit).
    """
    if diagnosis.primary is not None:
        return diagnosis.primary
    if any(v.undecided for v in diagnosis.modes.values()):
        return UNDETERMINED
    state = diagnosis.state
    return {"learning": "healthy", "converged": "healthy", "too_short": "healthy"}.get(state,
                                                                                     state)


def _rule_call(run: Run) -> str:
    fired = [m for m, on in threshold_rules(run).items() if on]
    return fired[0] if len(fired) == 1 else ("healthy" if not fired else SEVERAL)


def _confusion(truth: list[str], predicted: list[str], classes: tuple[str, ...]
               ) -> tuple[dict, dict]:
    """Count the confusions and score precision, recall and count per class.

    Rows true, columns called; a call outside ``classes`` counts as ``several`` (an abstention
    as :data:`UNDETERMINED`), a miss either way (NaN where a score is undefined).
    """
    columns = (*classes, SEVERAL, UNDETERMINED)
    confusion = {t: dict.fromkeys(columns, 0) for t in classes}
    for t, p in zip(truth, predicted, strict=True):
        confusion[t][p if p in columns else SEVERAL] += 1
    per_class = {}
    for label in classes:
        tp = confusion[label][label]
        called_as = sum(confusion[t][label] for t in classes)
        actual = sum(confusion[label].values())
        per_class[label] = {"precision": tp / called_as if called_as else float("nan"),
                            "recall": tp / actual if actual else float("nan"), "n": actual}
    return confusion, per_class


def _matrix(truth: list[str], predicted: list[str]) -> dict:
    """Score per class over :data:`MATRIX_CLASSES` and the share of no-failure runs flagged.

    Classes absent from the truth get NaN recall; the confusion counts come along, and the
    share of runs on which the diagnosis abstained (every one a miss).
    """
    confusion, per_class = _confusion(truth, predicted, MATRIX_CLASSES)
    healthy = sum(confusion["healthy"].values())
    flagged = sum(confusion["healthy"][m] for m in (*MODES, SEVERAL))
    abstained = sum(row[UNDETERMINED] for row in confusion.values())
    return {"confusion": confusion, "per_class": per_class,
            "healthy_flagged": flagged / healthy if healthy else float("nan"),
            "abstained": abstained / len(truth) if truth else float("nan")}


def evaluate_sources(sources: dict[str, list[LabelledRun]]) -> dict:
    """Score the diagnosis and the threshold rules on the same runs, source by source.

    Precision, recall and confusion per class, and every call.
    """
    out = {}
    for name, cases in sources.items():
        truth = [c.label for c in cases]
        model = [called(diagnose(c.run, warning=False)) for c in cases]
        rules = [_rule_call(c.run) for c in cases]
        out[name] = {"model": _matrix(truth, model), "threshold_rules": _matrix(truth, rules),
                     "cases": [{"name": c.name, "label": c.label, "model": m, "rules": r}
                               for c, m, r in zip(cases, model, rules, strict=True)]}
    return out


def _scores(truth: list[str], predicted: list[str]) -> dict:
    """Score per label: confusion matrix, precision and recall.

    Rows induced, columns called; ``several`` when more than one rule fires (a miss).
    """
    confusion, per_class = _confusion(truth, predicted, LABELS)
    per_mode = {mode: {k: v for k, v in scores.items() if k != "n"}
                for mode, scores in per_class.items()}
    return {"confusion": confusion, "per_mode": per_mode,
            "healthy_flagged_unstable": confusion["healthy"]["dynamical_instability"]}


def evaluate(cases: list[LabelledRun], *,
             calls: dict[int, tuple[LabelledRun, str, str]] | None = None) -> dict:
    """Confusion matrices of the model-based diagnosis and of the threshold rules.

    ``calls``, shared by the test beds of one scoring, holds each case (kept alive, so that
    its identity is not reused) with its two calls, so that a bed that joins two others
    diagnoses none of their runs again. The early warning, which no call reads, is not
    looked for.
    """
    calls = {} if calls is None else calls
    for c in cases:
        if id(c) not in calls:
            fired = [m for m, on in threshold_rules(c.run).items() if on]
            rule = fired[0] if len(fired) == 1 else "healthy" if not fired else "+".join(fired)
            calls[id(c)] = (c, diagnose(c.run, warning=False).primary or "healthy", rule)
    truth = [c.label for c in cases]
    model = [calls[id(c)][1] for c in cases]
    rules = [calls[id(c)][2] for c in cases]
    rule_scores = _scores(truth, [r if r in LABELS else SEVERAL for r in rules])
    rule_scores["ambiguous"] = sum(r not in LABELS for r in rules)
    return {"model": _scores(truth, model), "threshold_rules": rule_scores,
            "cases": [{"name": c.name, "label": c.label, "model": m, "rules": r}
                      for c, m, r in zip(cases, model, rules, strict=True)]}
