"""The public vocabulary: one name per concept, its symbol, and what each trainer calls it.

The public API (function parameters, dataclass fields, JSON keys) uses the names of
:data:`VOCABULARY`: ``momentum`` (never beta or beta1), ``stiffness``, ``lr`` (never eta or
learning_rate), ``group_size`` (never G or num_generations), ``batch``, ``kl``, ``refresh``
(never K), ``staleness`` (never d) and ``plateau`` (never r_star). Each term names its row of
the symbol table (:mod:`grpodyn.theory.symbols`, which gives the LaTeX form through
:func:`grpodyn.theory.symbols.vocabulary_latex`) and the keys under which TRL, verl and OpenRLHF
set it. Internal maths may keep the short symbol names inside a function.

The run settings the log loaders read (:data:`RUN_SETTINGS`: the terms above plus optimizer,
schedule, warm-up, beta2, reuse, logging interval and the completions' length cap) carry the two
lookup lists the loaders use: ``config_keys`` (searched in a run's flattened config, first hit
wins) and ``logged_keys`` (metrics some trainers log, read when constant over the run). This is
the one alias table of :mod:`grpodyn.empirical.logs.config` and
:mod:`grpodyn.empirical.logs.infer`.

This module is plain Python (no sympy), so the loaders and the numeric layer may import it.
Trainer keys: TRL ``GRPOConfig``; verl ``ppo_trainer.yaml`` (dotted paths); OpenRLHF
``train_ppo_ray`` options.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RUN_SETTINGS", "TRAINERS", "VOCABULARY", "Term", "config_keys", "logged_keys",
           "trainer_key"]

#: The trainers whose keys are mapped.
TRAINERS = ("trl", "verl", "openrlhf")


@dataclass(frozen=True)
class Term:
    """One public name, its symbol and the keys trainers use for it.

    Parameters
    ----------
    name : str
        The public name (a parameter, field or JSON key of grpodyn's API).
    meaning : str
        What it is, with its unit.
    symbol : str or None
        The row of :mod:`grpodyn.theory.symbols` (``beta``, ``k``, ...); None for a setting the
        theory does not use as a symbol.
    trainers : dict of str to str
        Per trainer (``trl``, ``verl``, ``openrlhf``), the config key that sets it, with a
        remark where the trainer sets it only through a combination of keys.
    config_keys : tuple of str
        Keys searched in a flattened config (a dotted key matches by its tail), first hit wins.
    logged_keys : tuple of str
        Metric names under which trainers log the value (read when constant over the run).
    """

    name: str
    meaning: str
    symbol: str | None = None
    trainers: dict[str, str] = field(default_factory=dict)
    config_keys: tuple[str, ...] = ()
    logged_keys: tuple[str, ...] = ()


_TERMS = [
    Term("momentum", "momentum: heavy-ball beta or Adam's beta1 (dimensionless, [0, 1))", "beta",
         {"trl": "adam_beta1", "verl": "actor_rollout_ref.actor.optim.betas[0]",
          "openrlhf": "adam_betas[0]"},
         ("adam_beta1", "beta1", "momentum")),
    Term("stiffness", "dimensionless stiffness k = a * kappa (1/step^2); measured, not set", "k"),
    Term("lr", "peak learning rate eta (parameter/gradient)", "eta",
         {"trl": "learning_rate", "verl": "actor_rollout_ref.actor.optim.lr",
          "openrlhf": "actor_learning_rate"},
         ("actor.optim.lr", "learning_rate", "actor_learning_rate", "optim.lr", "lr")),
    Term("group_size", "completions per prompt G", "G",
         {"trl": "num_generations", "verl": "actor_rollout_ref.rollout.n",
          "openrlhf": "n_samples_per_prompt"},
         ("num_generations", "rollout.n", "n_samples_per_prompt", "group_size",
          "num_samples_per_prompt", "n_generations", "samples_per_prompt"),
         ("group_size", "num_generations", "n_samples_per_prompt")),
    Term("batch", "prompts per optimizer step B", "B",
         {"trl": "per_device_train_batch_size x processes x gradient_accumulation_steps / "
                 "num_generations",
          "verl": "data.train_batch_size (per rollout; per optimizer step: "
                  "actor_rollout_ref.actor.ppo_mini_batch_size)",
          "openrlhf": "rollout_batch_size"},
         ("data.train_batch_size", "prompts_per_step", "num_prompts", "n_prompts",
          "prompt_batch_size", "questions_per_step", "batch"),
         ("num_questions", "num_prompts", "prompts_per_step")),
    Term("kl", "KL coefficient lambda (TRL's beta; dimensionless)", "lam",
         {"trl": "beta", "verl": "actor_rollout_ref.actor.kl_loss_coef (with use_kl_loss) or "
                                 "algorithm.kl_ctrl.kl_coef",
          "openrlhf": "init_kl_coef"},
         ("kl_ctrl.kl_coef", "kl_loss_coef", "init_kl_coef", "kl_coef", "kl_beta", "beta_kl",
          "kl_coefficient", "beta"),
         ("kl_coef", "actor/reward_kl_penalty_coeff", "kl_ctrl/kl_coef", "kl_beta")),
    Term("refresh", "optimizer steps per sampling refresh K (sample-and-hold)", "K",
         {"trl": "steps_per_generation (num_iterations > 1 is importance-corrected reuse)",
          "verl": "ppo_mini_batch_size divides data.train_batch_size into K steps",
          "openrlhf": "rollout_batch_size x n_samples_per_prompt / train_batch_size"}),
    Term("staleness", "fixed staleness d of the sampling policy (steps)", "d",
         {"trl": "0 (synchronous)", "verl": "0 (synchronous trainer)",
          "openrlhf": "0 (synchronous; async_train gives a lag of about one step)"}),
    Term("plateau", "fixed point r* of the expected reward (reward); measured", "r_star"),
]

#: The nine public names of the vocabulary.
VOCABULARY: dict[str, Term] = {term.name: term for term in _TERMS}

#: Run settings the loaders read beside the vocabulary (names of :class:`RunMeta` fields).
_SETTINGS = [
    Term("schedule", "learning-rate schedule (constant, linear, cosine, with warm-up)", None,
         {"trl": "lr_scheduler_type", "verl": "actor_rollout_ref.actor.optim.warmup_style",
          "openrlhf": "lr_scheduler"},
         ("lr_scheduler_type", "warmup_style", "lr_scheduler", "lr_schedule",
          "lr_scheduler_name", "scheduler")),
    Term("warmup_steps", "linear learning-rate warm-up (steps)", "T_w",
         {"trl": "warmup_steps", "verl": "actor_rollout_ref.actor.optim.lr_warmup_steps",
          "openrlhf": "lr_warmup_ratio x steps"},
         ("warmup_steps", "lr_warmup_steps", "num_warmup_steps", "warmup")),
    Term("optimizer", "optimizer family (sgd or adam)", None,
         {"trl": "optim", "verl": "actor_rollout_ref.actor.optim (AdamW)",
          "openrlhf": "Adam (fixed)"},
         ("optim", "optimizer", "optimizer_name", "optim.name", "optimizer.name",
          "optimizer_type")),
    Term("beta2", "Adam's second-moment decay (dimensionless)", None,
         {"trl": "adam_beta2", "verl": "actor_rollout_ref.actor.optim.betas[1]",
          "openrlhf": "adam_betas[1]"},
         ("adam_beta2", "beta2")),
    Term("num_iterations", "importance-corrected passes mu over each batch of samples", None,
         {"trl": "num_iterations", "verl": "actor_rollout_ref.actor.ppo_epochs",
          "openrlhf": "max_epochs"},
         ("num_iterations", "ppo_epochs", "epochs_per_rollout_batch", "num_ppo_epochs",
          "ppo_mini_epochs"),
         ("epochs_per_rollout_batch", "ppo_epochs", "num_iterations")),
    Term("logging_steps", "optimizer steps between two logged points", None,
         {"trl": "logging_steps", "verl": "trainer.log_freq (steps)", "openrlhf": "logging_steps"},
         ("logging_steps", "log_every", "log_interval", "log_freq")),
    Term("length_cap", "the most tokens a completion may have; longer ones are truncated "
                       "(tokens)", None,
         {"trl": "max_completion_length", "verl": "data.max_response_length",
          "openrlhf": "generate_max_len"},
         ("max_completion_length", "data.max_response_length", "rollout.response_length",
          "generate_max_len", "max_response_length")),
    Term("planned_steps", "the optimizer steps the run was set to take (steps)", None,
         {"trl": "max_steps (trainer_state.json records it)",
          "verl": "trainer.total_training_steps"},
         ("max_steps", "total_training_steps")),
]

#: Every setting a loader reads, vocabulary first (the order config lookups run in).
RUN_SETTINGS: dict[str, Term] = {term.name: term
                                 for term in (*_TERMS, *_SETTINGS)
                                 if term.config_keys or term.logged_keys}


def config_keys() -> dict[str, tuple[str, ...]]:
    """Return, per run setting, the config keys the loaders search (first hit wins).

    Returns
    -------
    dict of str to tuple of str
        Setting name (a :class:`RunMeta` field) -> keys in search order.
    """
    return {name: term.config_keys for name, term in RUN_SETTINGS.items() if term.config_keys}


def logged_keys() -> dict[str, tuple[str, ...]]:
    """Return, per run setting, the metric names under which trainers log it.

    Returns
    -------
    dict of str to tuple of str
        Setting name -> metric names, read when the value is constant over the run.
    """
    return {name: term.logged_keys for name, term in RUN_SETTINGS.items() if term.logged_keys}


def trainer_key(name: str, trainer: str) -> str | None:
    """Return the key with which ``trainer`` sets the setting ``name``.

    Parameters
    ----------
    name : str
        A public name or run setting (``group_size``, ``kl``, ...).
    trainer : {"trl", "verl", "openrlhf"}
        The trainer.

    Returns
    -------
    str or None
        The trainer's key (with a remark where it is a combination), or None when the trainer
        has none (a measured quantity such as ``stiffness``).

    Raises
    ------
    KeyError
        When ``name`` or ``trainer`` is unknown.
    """
    if trainer not in TRAINERS:
        raise KeyError(f"trainer {trainer!r} is not one of {', '.join(TRAINERS)}")
    terms = {**VOCABULARY, **{t.name: t for t in _SETTINGS}}
    if name not in terms:
        raise KeyError(f"{name!r} is not a public name or run setting")
    return terms[name].trainers.get(trainer)
