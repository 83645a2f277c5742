"""Metric names of each trainer, mapped onto the toolkit's canonical quantities.

One table per ecosystem. The names were looked up in the trainers' sources: TRL's
``GRPOTrainer._metrics`` (``reward``, ``reward_std``, ``frac_reward_zero_std``, ``entropy``,
``kl``, ``completions/mean_length``, ``completions/clipped_ratio``, the share of completions
truncated at ``max_completion_length``, per-function ``rewards/<func>/mean``; evaluation entries
prefixed ``eval_``; through W&B or TensorBoard the Trainer's callbacks rename them ``train/...``
and ``eval/...``); verl's ``metric_utils.compute_data_metrics`` (``critic/score/mean`` is the
task score, ``critic/rewards/mean`` the reward after any in-reward KL penalty,
``response_length/mean``, ``response_length/clip_ratio``: the share of responses at
``data.max_response_length``), its actor metrics (``actor/entropy``, ``actor/kl_loss``,
``actor/lr``), the trainer's ``training/epoch`` and validation metrics
(``val-core/<source>/<var>/mean@<n>``); OpenRLHF's PPO trainer status (``reward``, ``kl``,
``actor_lr``, ``response_length``, ``entropy_loss``: the mean token entropy, logged when
``--entropy_loss_coef`` is given; ``response_clip_ratio`` and ``rollout/truncated_rate``: the
share of samples cut at the generation limit; the short progress-bar names ``rm``, ``glen``,
``act_lr``, ``ent_loss``) and evaluation (``eval_<datasource>_pass1``, the mean reward over
a set's samples; ``pass<k>`` is the best of k, not a mean), which its W&B and TensorBoard
loggers (``WandbLogger``, ``TensorboardLogger``) name ``train/<key>`` and ``eval/<key>``.
The ``custom`` table holds the names hand-written loops use. TRL's ``clip_ratio/*`` and
verl's ``actor/pg_clipfrac`` are the PPO ratio's clipping, not the length cap, and are never
read as ``clipped_share``.

Lookup order for a log of ecosystem E: E's table, then the others (so a TRL log read through
W&B still finds ``train/reward``); within a table the first name present wins. Held-out names
may be regular expressions (``re:`` prefix). Every canonical name is an alias of its own
quantity (the ``custom`` table holds those no trainer uses), so that a run's own metrics
(``Run.metrics``, ``Run.to_pandas``) read back under their names.

A run validated on several sets logs one held-out metric per set (verl's
``val-core/<data_source>/...``, OpenRLHF's ``eval_<datasource>_pass1``): no one set is the
held-out reward, so :func:`combine_heldout_sources` adds their mean, named
``mean(<name>, <name>, ...)``, which :func:`resolve` prefers to any one of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from grpodyn.empirical.logs.common import Rows, number

__all__ = ["CANONICAL", "ALIASES", "METRIC_ALIASES", "resolve", "reward_candidates",
           "per_function_rewards", "heldout_sources", "combine_heldout_sources", "mean_name",
           "is_evaluation"]

#: The canonical quantities, in the order they are reported.
CANONICAL = ("reward", "reward_std", "frac_reward_zero_std", "entropy", "kl",
             "completion_length", "learning_rate", "heldout_reward", "advantage_max",
             "advantage_min", "epoch", "clipped_share")


def _prefixed(names: Iterable[str], prefix: str) -> tuple[str, ...]:
    return tuple(prefix + n for n in names)


_TRL = {
    "reward": ("reward", "rewards/mean"),
    "reward_std": ("reward_std", "rewards/std"),
    "frac_reward_zero_std": ("frac_reward_zero_std",),
    "entropy": ("entropy",),
    "kl": ("kl",),
    "completion_length": ("completions/mean_length", "completion_length"),
    "learning_rate": ("learning_rate",),
    "heldout_reward": ("eval_reward", "eval/reward", "eval_rewards/mean"),
    "advantage_max": (),
    "advantage_min": (),
    # passes over the dataset, fractional: B / N_p per step for N_p prompts dealt B a step
    "epoch": ("epoch",),
    "clipped_share": ("completions/clipped_ratio",),
}

#: Ecosystem -> canonical quantity -> metric names (first present wins).
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "trl": _TRL,
    "verl": {
        "reward": ("critic/score/mean", "critic/rewards/mean"),
        "reward_std": ("critic/score/std",),
        "frac_reward_zero_std": (),
        "entropy": ("actor/entropy",),
        "kl": ("actor/kl_loss", "actor/reward_kl_penalty"),
        "completion_length": ("response_length/mean",),
        "learning_rate": ("actor/lr",),
        "heldout_reward": (r"re:^val-core/.+/(?:reward|score|acc)/mean@\d+$",
                           r"re:^val/test_score/", r"re:^val-aux/[^/]+/(?:reward|score)/mean@\d+$"),
        # the step's extreme advantages (over response tokens): with binary rewards and GRPO
        # they reveal the fewest and most successes of its groups with spread
        "advantage_max": ("critic/advantages/max",),
        "advantage_min": ("critic/advantages/min",),
        # the epoch's index (whole numbers): it changes every N_p / B steps
        "epoch": ("training/epoch",),
        "clipped_share": ("response_length/clip_ratio",),
    },
    "openrlhf": {
        "reward": ("reward", "rm", "train/reward"),
        "reward_std": (),
        "frac_reward_zero_std": (),
        "entropy": ("entropy", "entropy_loss", "ent_loss", "train/entropy_loss"),
        "kl": ("kl", "train/kl"),
        "completion_length": ("response_length", "glen", "train/response_length"),
        "learning_rate": ("actor_lr", "act_lr", "train/actor_lr"),
        # the mean over the sets (eval_avg_pass1, where logged) before any one set's
        "heldout_reward": ("eval/reward", r"re:^(?:eval/)?eval_avg_pass1$",
                           r"re:^(?:eval/)?eval_.+_pass1$"),
        "advantage_max": (),
        "advantage_min": (),
        "epoch": (),
        "clipped_share": ("response_clip_ratio", "rollout/truncated_rate",
                          "train/response_clip_ratio", "train/rollout/truncated_rate"),
    },
    "wandb": {name: _prefixed(names, "train/") for name, names in _TRL.items()
              if name != "heldout_reward"} | {"heldout_reward": ("eval/reward",
                                                                "eval/rewards/mean")},
    "custom": {
        "reward": ("reward", "mean_reward", "reward_mean", "train/reward", "train_reward",
                   "avg_reward", "rewards/mean", "train/rewards", "score", "Reward",
                   "rollout/reward", "rollout_reward_mean", "rollout/reward_mean",
                   "rollout_reward", "accuracy"),
        "reward_std": ("reward_std", "std_reward", "rewards/std", "train/reward_std"),
        "frac_reward_zero_std": ("frac_reward_zero_std", "zero_std_ratio",
                                 "train/frac_reward_zero_std", "zero_std_fraction",
                                 "zero_advantage_fraction"),
        "entropy": ("entropy", "token_entropy", "train/entropy", "entropy_mean",
                    "policy_entropy_mean", "mean_entropy"),
        "kl": ("kl", "kl_div", "KL_ref", "kl_divergence", "train/kl", "approx_kl"),
        "completion_length": ("completion_length", "avg_response_token_length",
                              "response_length", "Avg Response Len", "train/completion_length",
                              "train/mean_response_length", "completion_length_mean",
                              "mean_completion_length"),
        "learning_rate": ("learning_rate", "lr", "Learning Rate", "train/learning_rate"),
        "heldout_reward": ("eval/reward", "eval_reward", "val/reward", "heldout_reward",
                           "test_score", "eval/rewards", "eval/pass_at_1", "eval/pass@1"),
        "advantage_max": ("advantage_max",),
        "advantage_min": ("advantage_min",),
        "epoch": ("epoch", "train/epoch"),
        "clipped_share": ("clipped_ratio", "truncated_ratio", "rollout/truncated_ratio",
                          "clipped_share", "truncation_rate"),
    },
}


#: Canonical quantity -> every literal name of every table (TRL's first): a flat view for code
#: that reads one trainer's live logs (e.g. the training callback).
METRIC_ALIASES: dict[str, tuple[str, ...]] = {
    quantity: tuple(dict.fromkeys(name for table in ALIASES.values()
                                  for name in table[quantity] if not name.startswith("re:")))
    for quantity in CANONICAL}


def _order(ecosystem: str) -> list[str]:
    return [ecosystem] + [e for e in ALIASES if e != ecosystem]


#: Held-out names that hold one validation set each: the name before the set, the set, after.
_PER_SOURCE = (re.compile(r"^(val-core/)(.+)(/(?:reward|score|acc)/mean@\d+)$"),
               re.compile(r"^(val/test_score/)(.+)()$"),
               re.compile(r"^(val-aux/)([^/]+)(/(?:reward|score)/mean@\d+)$"),
               re.compile(r"^((?:eval/)?eval_)(?!avg_pass1$)(.+)(_pass1)$"))


#: How trainers name evaluation metrics: TRL's ``eval_`` and ``eval/``, verl's ``val-core/``,
#: ``val-aux/`` and ``val/``, and the ``test_``, ``validation/`` of hand-written loops.
_EVALUATION = re.compile(r"^(?:eval|val|validation|test)(?:[/_]|-core/|-aux/)")


def is_evaluation(name: str) -> bool:
    """Return whether a metric name is an evaluation's (held-out sets), not training's."""
    return _EVALUATION.match(name) is not None


def mean_name(names: Iterable[str]) -> str:
    """Return the name of the mean of metrics: ``mean(<name>, <name>, ...)``."""
    return f"mean({', '.join(names)})"


def _mean_parts(name: str) -> list[str] | None:
    """Return the metrics a :func:`mean_name` averages, or None for any other name."""
    if not (name.startswith("mean(") and name.endswith(")")):
        return None
    return name[len("mean("):-1].split(", ")


def _match(name: str, available: set[str]) -> str | None:
    """Return the metric of ``available`` that an alias names, or None.

    A regular expression matches the mean of several metrics that it matches each of
    (:func:`mean_name`), which is preferred to them: unless some of them are no longer
    ``available`` (one of them read as the reward), where the mean is no held-out quantity.
    """
    if name.startswith("re:"):
        pattern = re.compile(name[3:])
        means = sorted(k for k in available
                       if (parts := _mean_parts(k)) and all(pattern.search(p) for p in parts)
                       and len({p in available for p in parts}) == 1)
        hits = means or sorted(k for k in available if pattern.search(k))
        return hits[0] if hits else None
    return name if name in available else None


def resolve(quantity: str, available: set[str], ecosystem: str = "custom") -> str | None:
    """Return the metric name that holds ``quantity`` among ``available`` names, or None."""
    for table in _order(ecosystem):
        for name in ALIASES[table].get(quantity, ()):
            hit = _match(name, available)
            if hit is not None:
                return hit
    return None


def reward_candidates(available: set[str]) -> list[str]:
    """Every name that could be a reward (for error messages and ``--reward-key`` hints)."""
    names = {n for table in ALIASES.values() for n in table["reward"] if n in available}
    return sorted(names | set(per_function_rewards(available)))


def per_function_rewards(available: set[str]) -> list[str]:
    """TRL's per-reward-function means.

    ``rewards/<func>/mean`` (or ``rewards/<func>`` in older versions), with the ``train/`` prefix of
    W&B/TensorBoard.
    """
    found = []
    for name in sorted(available):
        bare = name[len("train/"):] if name.startswith("train/") else name
        parts = bare.split("/")
        if parts[0] == "rewards" and ((len(parts) == 3 and parts[2] == "mean")
                                      or (len(parts) == 2 and parts[1] not in ("mean", "std"))):
            found.append(name)
    return found


def heldout_sources(available: set[str], ecosystem: str = "custom") -> list[str]:
    """Return the held-out metrics of several validation sets that differ only by the set.

    The held-out metric :func:`resolve` reads, and those named as it is but for the validation
    set (verl's ``val-core/<data_source>/reward/mean@1`` of each data source, OpenRLHF's
    ``eval_<datasource>_pass1``); none where one set is logged.

    Parameters
    ----------
    available : set of str
        The metric names of a log.
    ecosystem : str
        Which alias table names its metrics first.

    Returns
    -------
    list of str
        Two or more names, sorted; empty for one validation set or none.
    """
    held = resolve("heldout_reward", available, ecosystem)
    for pattern in _PER_SOURCE:
        found = pattern.match(held or "")
        if found is None:
            continue
        before, after = found.group(1), found.group(3)
        names = sorted(n for n in available if (m := pattern.match(n)) is not None
                       and (m.group(1), m.group(3)) == (before, after))
        return names if len(names) > 1 else []
    return []


def combine_heldout_sources(rows: Rows, ecosystem: str = "custom") -> tuple[Rows, list[str]]:
    """Return the rows with the mean of several validation sets' held-out metrics added.

    A run validated on several sets logs one held-out metric per set
    (:func:`heldout_sources`); reading any one of them as the held-out reward would judge the
    run by that set alone. Their mean, with equal weights, is added at each step that logs all
    of them, as :func:`mean_name` of them, which :func:`resolve` then reads; a note names the
    sets. Rows of one set, or rows that already hold the mean, are returned as they are.

    Parameters
    ----------
    rows : Rows
        One run's rows, in the order of the log.
    ecosystem : str
        Which alias table names the log's metrics first.

    Returns
    -------
    rows : Rows
        The rows, the mean added to those that complete a step's sets.
    notes : list of str
        What was averaged, and the steps that log only some of the sets.
    """
    if not heldout_sources(set().union(*(entry for _, entry in rows)), ecosystem):
        return rows, []  # one validation set or none among all the names: nothing to average
    available = {k for _, entry in rows for k, v in entry.items() if math.isfinite(number(v))}
    names = heldout_sources(available, ecosystem)
    mean = mean_name(names)
    if not names or mean in available:
        return rows, []
    seen: dict[float, dict[str, float]] = {}  # the sets' latest values at each step
    complete: set[float] = set()
    out: Rows = []
    for step, entry in rows:
        values = {k: number(entry[k]) for k in names if k in entry}
        values = {k: v for k, v in values.items() if math.isfinite(v)}
        if values and math.isfinite(step):
            at = seen.setdefault(step, {})
            at.update(values)
            if len(at) == len(names):
                entry = {**entry, mean: sum(at[k] for k in names) / len(names)}
                complete.add(step)
        out.append((step, entry))
    pattern = next(p for p in _PER_SOURCE if p.match(names[0]))
    parts = [found.groups() for n in names if (found := pattern.match(n)) is not None]
    sets = ", ".join(part[1] for part in parts)
    form = f"{parts[0][0]}<set>{parts[0][2]}"
    partial = len(set(seen) - complete)
    if not complete:
        return rows, [f"held-out reward: {len(names)} validation sets ({form}: {sets}) are "
                      "never logged at one step together, so no mean of them is formed; "
                      f"the held-out reward read is "
                      f"{resolve('heldout_reward', available, ecosystem)!r} alone"]
    return out, [f"held-out reward: the mean of {len(names)} validation sets ({form}: {sets}), "
                 f"equal weights, at the {len(complete)} steps that log all of them"
                 + (f"; {partial} steps that log only some of them hold no held-out value"
                    if partial else "")]
