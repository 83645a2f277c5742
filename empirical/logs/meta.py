"""The hyperparameters of a loaded run, each with where it came from (:class:`RunMeta`).

The theory needs a run's learning rate (the peak and its schedule: the stiffness k = a kappa,
a = lr for heavy-ball SGD, docs/theory.md Notation and section 1; Adam's a and schedules,
section 9), optimizer and momentum (heavy-ball beta or Adam's beta1: the mass and damping of
sections 1-2, Adam in section 9), group size G and prompts per step B (section 7, finite-G
statistics of Bernoulli rewards), the KL coefficient (section 8) and the number of updates per
sampled batch (section 8, PPO-style reuse). A log rarely says all of them; this module holds
what was found with its provenance, so that no later analysis presents a default or a guess as
a fact.

Provenance (``Hyperparameter.source``): ``logged`` (read from the log's own metrics),
``file:<name>`` (a config file beside the log, or the log's own config record), ``inferred``
(deduced, e.g. from the granularity of binary rewards; the evidence says how), ``user`` (a
command-line option) and ``default`` (a documented trainer default, never silently).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["Hyperparameter", "RunMeta", "META_FIELDS", "SOURCES", "HPARAM_FIELDS"]

#: The provenance kinds a hyperparameter may carry (``file:<name>`` names the file).
SOURCES = ("logged", "file:", "inferred", "user", "default")

#: grpodyn's own names of a run's settings (those of ``--hparams`` and of the ``grpodyn_hparams``
#: record of the logs grpodyn writes, less the seed, plus Adam's beta2) -> the :class:`RunMeta`
#: field each sets; read by exact name.
HPARAM_FIELDS = {"lr": "lr", "group_size": "group_size", "batch": "batch", "momentum": "momentum",
                 "beta2": "beta2", "kl": "kl", "num_iterations": "num_iterations",
                 "schedule": "schedule", "warmup": "warmup_steps", "optimizer": "optimizer",
                 "steps": "planned_steps"}


@dataclass(frozen=True)
class Hyperparameter:
    """One hyperparameter of a run and where it came from.

    Attributes
    ----------
    value : Any
        The value (a number or a short string such as ``"adamw"`` or ``"cosine"``).
    source : str
        ``"logged"``, ``"file:<name>"``, ``"inferred"``, ``"user"`` or ``"default"``.
    evidence : str
        One line: where or how it was read or inferred.
    """

    value: Any
    source: str
    evidence: str = ""

    def __post_init__(self) -> None:
        if not any(self.source == s or (s.endswith(":") and self.source.startswith(s))
                   for s in SOURCES):
            raise ValueError(f"unknown hyperparameter source {self.source!r}")

    def to_dict(self) -> dict[str, Any]:
        """Return the value with its source and evidence (JSON-ready)."""
        return {"value": self.value, "source": self.source, "evidence": self.evidence}


@dataclass
class RunMeta:
    """The hyperparameters of a run the theory uses; each a :class:`Hyperparameter` or None.

    Beside them, the reason the log leaves G and B open, where it does (a note's data).

    Attributes
    ----------
    lr : Hyperparameter or None
        PEAK learning rate (not the last logged value of a decaying schedule).
    schedule : Hyperparameter or None
        ``"constant"``, ``"linear"``, ``"cosine"``, ... (the logged schedule itself stays in
        ``run.metrics["learning_rate"]``).
    warmup_steps : Hyperparameter or None
        Learning-rate warm-up, in optimizer steps.
    optimizer : Hyperparameter or None
        ``"adamw"``, ``"adam"``, ``"sgd"``, ...
    momentum : Hyperparameter or None
        Heavy-ball beta or Adam's beta1 (docs/theory.md Notation and sections 1-2; Adam, section 9).
    beta2 : Hyperparameter or None
        Adam's beta2.
    group_size : Hyperparameter or None
        G, completions per prompt (TRL ``num_generations``, verl ``rollout.n``, OpenRLHF
        ``n_samples_per_prompt``).
    batch : Hyperparameter or None
        B, prompts per optimizer step.
    kl : Hyperparameter or None
        KL coefficient (TRL ``beta``, verl ``kl_coef``/``kl_loss_coef``, OpenRLHF
        ``init_kl_coef``).
    num_iterations : Hyperparameter or None
        Updates per sampled batch (TRL ``num_iterations``, verl ``ppo_epochs``, OpenRLHF
        ``max_epochs``).
    logging_steps : Hyperparameter or None
        Optimizer steps between two logged points.
    length_cap : Hyperparameter or None
        The most tokens a completion may have (TRL ``max_completion_length``, verl
        ``data.max_response_length``, OpenRLHF ``generate_max_len``); longer ones are truncated.
    planned_steps : Hyperparameter or None
        The optimizer steps the run was set to take (TRL ``max_steps``, which its
        ``trainer_state.json`` records; verl ``trainer.total_training_steps``): where "the rest
        of the run" ends.
    group_batch_reason : str or None
        Not a hyperparameter: why the log determines neither G nor B, where the loader's
        inference (``infer.infer_meta``) found so; None otherwise. It stays when the user gives
        G or B, so that the note on the one still unknown gives the log's own reason.
    """

    lr: Hyperparameter | None = None
    schedule: Hyperparameter | None = None
    warmup_steps: Hyperparameter | None = None
    optimizer: Hyperparameter | None = None
    momentum: Hyperparameter | None = None
    beta2: Hyperparameter | None = None
    group_size: Hyperparameter | None = None
    batch: Hyperparameter | None = None
    kl: Hyperparameter | None = None
    num_iterations: Hyperparameter | None = None
    logging_steps: Hyperparameter | None = None
    length_cap: Hyperparameter | None = None
    planned_steps: Hyperparameter | None = None
    group_batch_reason: str | None = None

    def value(self, name: str, default: Any = None) -> Any:
        """Return the value of hyperparameter ``name``, or ``default`` when unknown."""
        if name not in META_FIELDS:
            raise KeyError(f"no hyperparameter named {name!r}; known: {', '.join(META_FIELDS)}")
        entry = getattr(self, name)
        return default if entry is None else entry.value

    def with_overrides(self, **values: Any) -> RunMeta:
        """Return a copy where every non-None value replaces the field, with source ``user``."""
        unknown = set(values) - set(META_FIELDS)
        if unknown:
            raise KeyError(f"no hyperparameter named {', '.join(sorted(unknown))}")
        changes = {name: Hyperparameter(value, "user", "given on the command line")
                   for name, value in values.items() if value is not None}
        return replace(self, **changes)

    def merged(self, other: RunMeta) -> RunMeta:
        """Return a copy with the fields of ``other`` filled in where this one has none."""
        return replace(self, **{name: getattr(other, name) for name in META_FIELDS
                                if getattr(self, name) is None
                                and getattr(other, name) is not None})

    def to_items(self) -> list[tuple[str, Hyperparameter]]:
        """(name, hyperparameter) of the known ones, in field order."""
        return [(name, getattr(self, name)) for name in META_FIELDS
                if getattr(self, name) is not None]

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{name: {"value", "source", "evidence"}}`` for the known hyperparameters."""
        return {name: h.to_dict() for name, h in self.to_items()}


#: Names of the hyperparameter fields of :class:`RunMeta`, in order (not the reason G and B
#: are open, which is no hyperparameter).
META_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RunMeta)
                                     if f.name != "group_batch_reason")
