"""Hyperparameters deduced from a run's own metrics, always labelled as such.

- Peak learning rate and schedule from the logged ``learning_rate`` (the peak is the largest
  logged value; the schedule a warm-up, then constant, linear or cosine decay by the better
  least-squares match). The theory's stiffness uses the learning rate (docs/theory.md sections 4 and
  9), and the last value of a decaying schedule can be 100x below the peak.
- G and B from the granularity of binary rewards (docs/theory.md section 7): with rewards in {0, 1}
  the mean reward of a step over B prompts x G completions is a multiple of 1/(B G), and the
  share of prompts whose G rewards are all equal (``frac_reward_zero_std``) a multiple of 1/B.
  The smallest such denominators are reported as ``inferred`` with the evidence; when the
  granularity does not pin them, a note says "not determined". A logged point that averages
  several steps (logging_steps > 1) or processes has a finer granularity, so nothing is inferred
  from such points. A total that is not itself a mean of 0/1 rewards (TRL's ``reward`` weighs
  the reward functions by ``reward_weights``) has another granularity: where its logged std fits
  no spread of 0/1 rewards of its mean, B G is not read from it and a note says how to give G.
  The zero-std share counts prompts whatever the rewards, so it still gives B.
  A B the settings give is checked against the same evidence: TRL's settings count the prompts
  of one process, its logged shares those of all; where the shares pin another B, the log's is
  taken, with a note naming both.
- The learning rate from the run's name when nothing logs it: sweeps name their runs by it
  (``lr_sweep_1e-5``, ``grpo_lr3e-6``, ``lr=2e-5``). Read only from a token ``lr`` followed by
  one number in (0, 1), labelled ``inferred`` with the name it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from grpodyn.empirical.logs.common import number
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta
from grpodyn.ground.checks import LR_MAX
from grpodyn.theory.vocabulary import logged_keys

if TYPE_CHECKING:  # loaders imports this module
    from grpodyn.empirical.logs.loaders import Run

__all__ = ["Functions", "infer_meta", "granularity", "schedule_of", "logged_meta",
           "format_defaults", "lr_from_name", "LOGGED_KEYS", "TRAINER_DEFAULTS",
           "group_batch_notes"]

#: ``lr`` as a token (not inside a word such as ``clr``), optional ``_sweep``, a separator, a
#: number in plain or exponent notation
_LR_IN_NAME = re.compile(r"(?<![a-z])lr(?:[_-]?sweep)?[_=-]?(\d+(?:\.\d+)?(?:e-?\d+)?)(?![\d.])",
                         re.IGNORECASE)


#: Relative difference between a config's lr and the logged one beyond which they disagree.
LR_DISAGREEMENT = 0.1


#: TRL's per-function reward means beside a total reward: name -> (mean, std or None) by step.
Functions = dict[str, tuple[np.ndarray, np.ndarray | None]]


def lr_from_name(name: str | None) -> float | None:
    """Return the learning rate a run's name gives (``lr_sweep_1e-5`` -> 1e-5), else None.

    One match only, and only a value in (0, 1): a name with two lr tokens, or a number that
    cannot be a learning rate, gives nothing.
    """
    if not name:
        return None
    values = {float(m) for m in _LR_IN_NAME.findall(name)}
    if len(values) != 1:
        return None
    value = values.pop()
    return value if 0 < value < 1 else None

#: Hyperparameters some trainers log as metrics (read when constant over the run), from the
#: one alias table (grpodyn.theory.vocabulary).
LOGGED_KEYS: dict[str, tuple[str, ...]] = logged_keys()

#: The optimizer and Adam beta1 a trainer uses unless its config says otherwise, by the prefix
#: of the log format that names the trainer, with the documented default they come from.
TRAINER_DEFAULTS: dict[str, tuple[str, float, str]] = {
    "trl": ("adamw", 0.9, "TRL's TrainingArguments: optim adamw_torch, adam_beta1 0.9"),
    "verl": ("adamw", 0.9, "verl's actor optim: AdamW, betas (0.9, 0.999)"),
    "openrlhf": ("adamw", 0.9, "OpenRLHF's actor optimizer: AdamW, adam_betas (0.9, 0.95)"),
}

_EPS = 2e-6  # how far from k/N a logged mean may lie (float32 means, 6+ printed digits)
_N_MAX = 4096
_SCREEN = 16  # values on which granularity screens every denominator at once


def granularity(values: np.ndarray, *, n_max: int = _N_MAX, eps: float = _EPS) -> int | None:
    """Return the smallest N <= n_max such that every value is a multiple of 1/N, or None.

    Multiples within ``eps``. N = 1 (all values 0 or 1) says nothing and is returned as None.
    """
    v = values[np.isfinite(values)]
    if v.size < 5:
        return None
    # screen every N at once on the first values (an N that fails there fails on all), then
    # test the survivors in increasing order on every value: the same N as testing each N on
    # all values, without 4096 passes over a run whose rewards are not multiples of anything
    ns = np.arange(1, n_max + 1)
    scaled = v[:_SCREEN, None] * ns
    survivors = ns[np.all(np.abs(scaled - np.round(scaled)) <= ns * eps, axis=0)]
    for n in survivors.tolist():
        scaled = v * n
        if np.all(np.abs(scaled - np.round(scaled)) <= n * eps):
            return n if n > 1 else None
    return None


def schedule_of(steps: np.ndarray, lr: np.ndarray) -> tuple[str, int | None, str] | None:
    """(schedule, warm-up steps or None, evidence) of a logged learning-rate series.

    A negative entry is not a learning rate (a corrupt or mislabelled value): it is left out
    with the non-finite ones, so it can neither set the peak nor overflow the ratios to it.
    """
    known = np.isfinite(lr) & (lr >= 0)
    s, x = steps[known], lr[known]
    if x.size < 3 or np.max(x) <= 0:
        return None
    peak = float(np.max(x))
    if np.ptp(x) <= 1e-6 * peak:
        return "constant", None, f"logged learning_rate constant at {peak:.4g}"
    top = int(np.argmax(x >= 0.999 * peak))
    warmup = int(s[top]) if top > 0 and x[0] < 0.9 * peak else None
    tail_s, tail = s[top:], x[top:] / peak
    words = f"logged learning_rate peaks at {peak:.4g}" + (
        f" after a warm-up to step {warmup}" if warmup else "")
    if warmup and tail.size == 1:  # the peak is the last logged point: no flat part seen
        return "constant_with_warmup", warmup, (
            f"{words}, its last logged point: the warm-up lasts at least to step {warmup}; "
            "the schedule after it is not in the log")
    if tail.size < 3 or np.ptp(tail) < 1e-3:
        return ("constant_with_warmup" if warmup else "constant"), warmup, words + ", then flat"
    span = max(float(s[-1]) - float(tail_s[0]), 1.0)
    # both decays reach 0 at the end of training, T >= the last logged step: fit T on a grid
    best: dict[str, float] = {}
    for total in np.linspace(span, 4 * span, 61):
        u = (tail_s - tail_s[0]) / total
        for name, curve in (("linear", 1 - u), ("cosine", 0.5 * (1 + np.cos(np.pi * u)))):
            err = float(np.mean((curve - tail) ** 2))
            best[name] = min(best.get(name, np.inf), err)
    name = min(best, key=best.get)
    return name, warmup, (f"{words}, then decays like a {name} schedule (mean squared misfit "
                          f"{_misfit_words(best[name])} vs {_misfit_words(max(best.values()))})")


def _misfit_words(err: float) -> str:
    """Say a mean squared misfit of the lr ratio to two figures, below 1e-12 as such.

    A schedule that the grid meets exactly leaves round-off, like 1.3e-33, which means nothing.
    """
    return "< 1e-12" if err < 1e-12 else f"{err:.2g}"


def _no_group_batch_note(reason: str) -> str:
    """Return the loader's note that the log determines neither G nor B, for ``reason``.

    The note is text built from the reason (``RunMeta.group_batch_reason``), so that
    :func:`group_batch_notes` finds it and rewrites it from the same data.
    """
    return f"group size G and batch B: not determined ({reason})"


#: Slack on a logged reward_std squared against the largest spread 0/1 rewards allow, relative
#: and absolute: a printout of 4 decimals moves a std near 0.5 by 5e-5, its square by 5e-5.
_SPREAD_RELATIVE, _SPREAD_ABSOLUTE = 1e-3, 2e-4

#: Logged zero-std shares from which their smallest denominator is taken as B over the settings':
#: a step's share out of 2 B is a multiple of 1/B with a chance near 1/2, at 20 steps near 1e-6.
DECISIVE_SHARES = 20


@dataclass(frozen=True)
class _Evidence:
    """What the granularity of a run's logged means says of B G and of B.

    ``total`` (B G) where every mean reward is a multiple of 1/total and nothing shows the
    reward to be other than a mean of 0/1 rewards; ``batch`` (B) where every zero-std share is
    a multiple of 1/batch; ``why`` says why the mean reward gives no B G where it has a
    granularity that is not B G's; ``blind`` marks rewards outside [0, 1] (no binary run).
    """

    total: int | None = None
    batch: int | None = None
    total_words: str = ""
    batch_words: str = ""
    shares: int = 0
    why: str = ""
    blind: bool = False

    @property
    def words(self) -> str:
        """The evidence in one line, or why there is none."""
        return "; ".join(filter(None, (self.total_words, self.batch_words, self.why))) or \
            "no common denominator up to 4096"


def _paired_std(run: Run) -> np.ndarray | None:
    """Return the logged spread of the rewards whose mean is the run's reward, else None.

    ``reward_std`` is read beside any reward: beside one reward function read with
    ``--reward-key`` it is the spread of TRL's total, not of that function. Only a std named
    after the reward (``reward`` and ``reward_std``, ``.../mean`` and ``.../std``) is its own.
    """
    std = run.metrics.get("reward_std")
    key = run.reward_key
    twins = {key + "_std"} | ({key[:-len("mean")] + "std"} if key.endswith("/mean") else set())
    return std if std is not None and run.metric_keys.get("reward_std") in twins else None


def _near(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Whether squared stds ``x`` and ``y`` agree within the slack for printed digits."""
    return np.abs(x - y) <= _SPREAD_RELATIVE * np.abs(y) + _SPREAD_ABSOLUTE


def _spread_misfits(reward: np.ndarray, std: np.ndarray, zero_std: np.ndarray | None,
                    n: int, batch: int | None, group: object) -> tuple[int, int, int | None]:
    """Count the steps whose logged reward std fits no spread of 0/1 rewards of that mean.

    Two versions of TRL's ``reward_std`` are tested, each over the whole run. Its current one,
    the unbiased std of all N = B G rewards of a step, squared is p (1 - p) N / (N - 1) for
    0/1 rewards of mean p (p (1 - p) for a population std, as custom loops log it). Earlier
    versions logged the mean of the per-group unbiased stds: at most
    sqrt(p (1 - p) G / (G - 1)) (Jensen's inequality twice), and, with a share z of groups
    without spread, between (1 - z) / sqrt(G) (one success in G) and (1 - z) sqrt(G / (4 (G -
    1))) (G / 2 successes). A weighted sum of reward functions (TRL's ``reward_weights``)
    spreads otherwise, outside both at many steps. G is the known one, else N / B where B
    divides N; the zero-std share bounds a mean of per-group stds only at such a G, and without
    one G = 2 bounds any G.

    Parameters
    ----------
    reward, std : numpy.ndarray
        The logged mean reward and its std, step by step (NaN where not logged).
    zero_std : numpy.ndarray or None
        The logged zero-std share, where logged.
    n : int
        The N = B G the 0/1 rewards would have (the mean reward's granularity).
    batch : int or None
        B where the zero-std share gives it.
    group : object
        G where known (an int >= 2), else anything.

    Returns
    -------
    tuple
        Steps that misfit the std of all N rewards, and the mean of per-group stds; and the G
        tested (None where none is known: tested at G = 2).
    """
    g = group if isinstance(group, int) and group > 1 else (
        n // batch if batch and n % batch == 0 and n // batch > 1 else None)
    zero_std, group = (zero_std, g) if g else (None, 2)
    known = np.isfinite(reward) & np.isfinite(std)
    p, s2 = reward[known], std[known] ** 2
    spread = p * (1 - p)
    pooled = ~(_near(s2, spread * n / (n - 1)) | _near(s2, spread))
    groups = s2 > spread * group / (group - 1) * (1 + _SPREAD_RELATIVE) + _SPREAD_ABSOLUTE
    if zero_std is not None:
        z = np.where(np.isfinite(zero_std[known]), zero_std[known], 0.0)
        low, high = (1 - z) ** 2 / group, (1 - z) ** 2 * group / (4 * (group - 1))
        groups |= (s2 < low * (1 - _SPREAD_RELATIVE) - _SPREAD_ABSOLUTE) | (
            s2 > high * (1 + _SPREAD_RELATIVE) + _SPREAD_ABSOLUTE)
    return int(pooled.sum()), int(groups.sum()), g


def _reward_granularity(run: Run, batch: int | None, group: object) -> tuple[int | None, str]:
    """(B G, "") from the mean reward's granularity, or (None, why it gives none).

    A total that is not itself a mean of 0/1 rewards has a granularity that is not 1/(B G):
    TRL's ``reward`` sums ``reward_weights[i] * rewards/<func>/mean``, whose weights 1 and 0.1
    make it a multiple of 1/(10 B G). Its logged std tells: a weighted sum spreads as 0/1
    rewards of its mean cannot (:func:`_spread_misfits`), at the G the evidence gives.
    """
    parts = run.reward_key.split("+")
    if len(parts) > 1:
        return None, (f"the reward is the sum of {len(parts)} logged rewards, not one mean of "
                      "0/1 rewards, so its granularity does not give B G; give --group-size, "
                      "or read one 0/1 reward with --reward-key")
    n = granularity(run.reward)
    std = _paired_std(run)
    if n is None or std is None:
        return n, ""
    pooled, groups, g = _spread_misfits(run.reward, std, run.metrics.get("frac_reward_zero_std"),
                                        n, batch, group)
    if min(pooled, groups) == 0:
        return n, ""
    steps = int((np.isfinite(run.reward) & np.isfinite(std)).sum())
    size = g or "any size"
    return None, (f"the logged reward, every value a multiple of 1/{n}, is not a mean of 0/1 "
                  f"rewards: its {run.metric_keys['reward_std']} fits neither the std of {n} 0/1 "
                  f"rewards of that mean ({pooled} of {steps} steps do not) nor a mean of "
                  f"per-group stds of 0/1 rewards in groups of {size} ({groups} do not), as "
                  "where TRL's reward sums the reward functions times their reward_weights, so "
                  f"1/{n} is not 1/(B G); give --group-size, or read one 0/1 reward function "
                  "with --reward-key (its logged rewards/<func>/mean)")


def _function_granularity(functions: Functions,
                          zero_std: np.ndarray | None, batch: int | None,
                          group: object) -> tuple[int | None, str]:
    """(B G, words) from the first reward function whose logged mean is a mean of 0/1 rewards.

    A function's mean over a step's B G completions is a multiple of 1/(B G) where its rewards
    are 0/1; its own logged std, where there is one, must fit that spread
    (:func:`_spread_misfits`), as the total's must.
    """
    for name, (mean, std) in sorted(functions.items()):
        finite = mean[np.isfinite(mean)]
        if finite.size < 5 or finite.min() < 0 or finite.max() > 1:
            continue
        n = granularity(mean)
        if n is None:
            continue
        if std is not None and min(_spread_misfits(mean, std, zero_std, n, batch, group)[:2]) > 0:
            continue
        return n, (f"every one of {finite.size} logged {name} values (a reward function's "
                   f"mean, its rewards 0/1) is a multiple of 1/{n}")
    return None, ""


def _binary_evidence(run: Run, group: object,
                     functions: Functions) -> _Evidence:
    """B G and B from the granularity of the mean reward and the zero-std share.

    The zero-std share counts the step's prompts whatever the rewards, so it gives B also where
    the mean reward gives no B G (rewards outside [0, 1], a weighted total). Where the total is
    no mean of 0/1 rewards, a 0/1 reward function's mean gives B G
    (:func:`_function_granularity`).
    """
    steps = run.steps
    if steps.size > 1 and np.any(np.diff(steps) != 1):
        return _Evidence(why="logged points are not consecutive steps (each may average "
                             "several)")
    zero_std = run.metrics.get("frac_reward_zero_std")
    b = granularity(zero_std) if zero_std is not None else None
    shares = 0 if zero_std is None else int(np.isfinite(zero_std).sum())
    batch_words = (f"every one of {shares} logged frac_reward_zero_std values is a multiple of "
                   f"1/{b}") if b else ""
    reward = run.reward
    if reward.size < 5 or np.nanmin(reward) < 0 or np.nanmax(reward) > 1:
        return _Evidence(batch=b, batch_words=batch_words, shares=shares,
                         why="rewards outside [0, 1]: not binary 0/1", blind=True)
    n, why = _reward_granularity(run, b, group)
    total_words = (f"every one of {np.isfinite(reward).sum()} logged mean rewards is a multiple "
                   f"of 1/{n}") if n else ""
    if n is None and why and functions:
        n, total_words = _function_granularity(functions, zero_std, b, group)
        if n is not None:
            why = ""
    return _Evidence(n, b, total_words, batch_words, shares, why)


def _check_batch(meta: RunMeta, evidence: _Evidence, notes: list[str]) -> None:
    """Check the settings' B against the log's granularity; take the log's where it pins B.

    A step's zero-std share is a share of its B prompts, so B is a multiple of the shares'
    denominator, and the mean of 0/1 rewards a multiple of 1/(B G). TRL's settings give B per
    process (one device's completions over G), while the shares are gathered over all
    processes: on 4 processes they are multiples of 1/(4 B). Where the settings' B does not fit
    the shares, the shares' denominator is taken when :data:`DECISIVE_SHARES` of them give it
    and the mean reward, where it gives B G, agrees; otherwise the conflict is noted and the
    settings' B kept.
    """
    setting = meta.batch
    given, group = setting.value, meta.value("group_size")
    if not isinstance(given, int) or given <= 0:
        return
    g = group if isinstance(group, int) and group > 0 else None
    misfits = []
    b = evidence.batch
    if b and given % b:
        misfits.append(f"{evidence.batch_words} (a share of the step's B prompts), which "
                       f"{given} prompts cannot give")
    n = evidence.total
    if n and g and (given * g) % n:
        misfits.append(f"{evidence.total_words}, not of 1/(B G) = 1/{given * g}")
    if not misfits:
        return
    # the shares pin B where enough of them say it and the mean reward, where it speaks, agrees
    pinned = bool(b and given % b and evidence.shares >= DECISIVE_SHARES
                  and not (n and g and (b * g) % n))
    if not pinned:
        notes.append(f"batch B: the settings' {given} ({setting.evidence}) does not fit the log: "
                     f"{'; '.join(misfits)}; {given} is kept; give --batch to choose")
        return
    several = (f"; {b} = {b // given} x {given}: the settings count the prompts of one process "
               f"of {b // given}?") if b % given == 0 else ""
    meta.batch = Hyperparameter(b, "inferred", f"{evidence.batch_words}; {setting.source} gives "
                                               f"{given} ({setting.evidence})")
    notes.append(f"batch B: {b} from the log, not the settings' {given} ({setting.evidence}): "
                 f"{'; '.join(misfits)}{several}; give --batch to choose")


def logged_meta(rows: list[tuple[float, dict]]) -> RunMeta:
    """Hyperparameters logged as metrics with one value over the whole run (source ``logged``)."""
    meta = RunMeta()
    for name, keys in LOGGED_KEYS.items():
        for key in keys:
            values = {float(v) for _, r in rows if key in r
                      for v in [number(r[key])] if np.isfinite(v)}
            if len(values) == 1:
                value = values.pop()
                setattr(meta, name, Hyperparameter(int(value) if value.is_integer() else value,
                                                   "logged", f"{key}, the same at every step"))
                break
    return meta


def _logged_lr(lr: np.ndarray, meta: RunMeta, notes: list[str]) -> bool:
    """Take the learning rate from its logged series into ``meta``; False when it is no lr.

    The peak of the logged series is the lr where none is known. A series that never rises
    above 0 (a printout that rounds the lr away) gives none, with a note. Where a config file
    gave another value, the logged one, which the optimizer used, replaces it when it is
    constant or exceeds the config's (a launch override); a lower peak of a schedule may be
    its sampling between logged points, so the config's stays, with a note.
    """
    known = lr[np.isfinite(lr)]
    peak = float(known.max())
    if not 0 < peak <= LR_MAX:
        why = ("rounded away in the printout?" if peak == 0
               else "negative: no learning rate is" if peak < 0
               else f"beyond any learning rate, {LR_MAX:g}: a corrupt record?")
        notes.append(f"learning_rate is logged as {peak:g} at its highest ({why}): the lr is "
                     "not known; give --lr (in Python run.meta.with_overrides(lr=...))")
        return False
    words = f"peak of the logged learning_rate ({known.size} points)"
    if known.size > 1 and known[0] == peak and known[-1] < known[0]:
        words += ("; the first logged point already decays, so the schedule's own peak may be "
                  "a little higher")
    if meta.lr is None:
        meta.lr = Hyperparameter(peak, "logged", words)
        return True
    given = meta.lr.value
    if not (str(meta.lr.source).startswith("file:") and isinstance(given, (int, float))
            and given > 0 and abs(peak / given - 1) > LR_DISAGREEMENT):
        return True
    constant = np.ptp(known) <= 1e-9 * peak
    shape = "is constant at" if constant else "peaks at"
    if constant or peak > given:
        notes.append(f"lr: {meta.lr.source} gives {given:g}, the logged learning_rate {shape} "
                     f"{peak:g}: the logged value, which the optimizer used, is taken")
        meta.lr = Hyperparameter(peak, "logged", f"{words}; {meta.lr.source} gives {given:g}")
    else:
        notes.append(f"lr: {meta.lr.source} gives {given:g}, the logged learning_rate {shape} "
                     f"{peak:g} (a schedule read between its logged points may miss its peak): "
                     "the config's is kept; give --lr to choose (in Python "
                     "run.meta.with_overrides(lr=...))")
    return True


def infer_meta(run: Run, meta: RunMeta, *,
               functions: Functions | None = None
               ) -> tuple[RunMeta, list[str]]:
    """Fill in the learning rate, schedule, G and B of ``meta`` from the run's metrics.

    Only fields that are unknown are filled; notes say what could not be determined.
    ``functions`` holds TRL's per-function reward means beside a total reward (name -> mean
    and std by step, the std None where not logged): where the total is not a mean of 0/1
    rewards, a 0/1 function's mean gives B G instead.
    """
    notes: list[str] = []
    lr = run.metrics.get("learning_rate")
    if lr is not None and np.isfinite(lr).any():
        if _logged_lr(lr, meta, notes):
            found = schedule_of(run.steps, lr)
            if found is not None:
                name, warmup, words = found
                if meta.schedule is None:
                    meta.schedule = Hyperparameter(name, "inferred", words)
                if meta.warmup_steps is None and warmup is not None:
                    meta.warmup_steps = Hyperparameter(warmup, "inferred", words)
    if meta.lr is None:
        for name in (run.run_name, Path(run.source).stem):
            value = lr_from_name(name)
            if value is not None:
                meta.lr = Hyperparameter(value, "inferred", f"the run's name {name!r}")
                break
    _group_and_batch(run, meta, notes, functions or {})
    return meta, notes


def _group_and_batch(run: Run, meta: RunMeta, notes: list[str],
                     functions: Functions) -> None:
    """Fill in G and B of ``meta`` from the granularity evidence; check the settings' B by it."""
    evidence = _binary_evidence(run, meta.value("group_size"), functions)
    if meta.batch is not None:
        _check_batch(meta, evidence, notes)
    if meta.group_size is not None and meta.batch is not None:
        return
    n, b, words = evidence.total, evidence.batch, evidence.words
    if n is None and b is None:
        if meta.group_size is None and meta.batch is None and not evidence.blind:
            meta.group_batch_reason = words
            notes.append(_no_group_batch_note(words))
        return
    g_known = meta.value("group_size")
    if b is not None and meta.batch is None:
        meta.batch = Hyperparameter(b, "inferred", evidence.batch_words +
                                    " (a share of the step's B prompts)")
    b_known = meta.value("batch")
    if meta.group_size is None and n is not None and isinstance(b_known, int) and b_known > 0 \
            and n % b_known == 0 and n // b_known > 1:
        meta.group_size = Hyperparameter(n // b_known, "inferred",
                                         f"{words}: B G = {n}, B = {b_known} (if rewards are "
                                         "binary)")
    if meta.batch is None and n is not None and isinstance(g_known, int) and g_known > 0 \
            and n % g_known == 0:
        meta.batch = Hyperparameter(n // g_known, "inferred",
                                    f"{words}: B G = {n}, G = {g_known} (if rewards are binary)")
    if meta.group_size is None:
        notes.append(f"group size G: not determined: {evidence.why}" if evidence.why and not
                     evidence.blind else f"group size G: not determined ({words}" +
                     (f"; B G = {n} if rewards are binary" if n else "") + ")")
    if meta.batch is None:
        notes.append(f"prompts per step B: not determined ({words})")


def format_defaults(fmt: str) -> RunMeta:
    """Return the optimizer and momentum a log's trainer uses by default (source ``default``).

    Parameters
    ----------
    fmt : str
        The detected log format (``Run.format``), e.g. ``"trl_trainer_state"``.

    Returns
    -------
    RunMeta
        ``optimizer`` and ``momentum`` (Adam's beta1) from :data:`TRAINER_DEFAULTS` when the
        format names a trainer; an empty RunMeta otherwise (a hand-written loop has no default).
    """
    meta = RunMeta()
    for prefix, (optimizer, beta1, evidence) in TRAINER_DEFAULTS.items():
        if fmt.startswith(prefix):
            meta.optimizer = Hyperparameter(optimizer, "default", f"{fmt} log: {evidence}")
            meta.momentum = Hyperparameter(beta1, "default", f"{fmt} log: {evidence}")
    return meta


def group_batch_notes(run: Run) -> list[str]:
    """Return the run's warnings with the loader's note on G and B true for its G and B now.

    :func:`infer_meta` notes that the log determines neither G nor B before a G or B the user
    gives (``--group-size``, ``--batch``) enters ``run.meta``; beside a diagnosis or advice that
    uses that G the note would say the opposite of what they do. Where ``run.meta`` now knows G
    or B the note names it with its source and keeps the loader's reason for the one still
    unknown; where it knows both the note goes. The note and its rewrite are both built from the
    reason ``run.meta.group_batch_reason`` keeps, so no other warning is taken for it.

    Parameters
    ----------
    run : Run
        A loaded run, its overrides applied.

    Returns
    -------
    list of str
        The run's warnings, the note on G and B as ``run.meta`` now has them.
    """
    reason = run.meta.group_batch_reason
    known = {name: getattr(run.meta, name) for name in ("group_size", "batch")}
    if reason is None or all(entry is None for entry in known.values()):
        return list(run.warnings)
    words = {"group_size": "group size G", "batch": "batch B"}
    now = [] if all(entry is not None for entry in known.values()) else [
        "; ".join(f"{words[name]} = {entry.value} (source: {entry.source})" if entry is not None
                  else f"{words[name]}: not determined ({reason})"
                  for name, entry in known.items())]
    note = _no_group_batch_note(reason)
    return [line for warning in run.warnings
            for line in (now if warning == note else [warning])]
