"""Hyperparameters from the config files that sit beside a log, or that a log records.

Files read (in a log's folder, a checkpoint's folder and the run folder above it):
``training_args.json``, ``config.json``, ``grpo_config.json``, ``args.json``, ``hparams.json``,
``config.yaml`` (W&B's ``{key: {value: ...}}`` form too), ``hparams.yaml``,
``training_args.yaml``, ``config.yml`` and TRL's ``training_args.bin`` (a pickle, read by
``logs_pickle`` without running anything). Nested configs (verl's OmegaConf dump) are flattened to
dotted keys and matched by their last components: the names of TRL's ``GRPOConfig``, verl's
``actor_rollout_ref.actor.optim.lr`` / ``rollout.n`` / ``data.train_batch_size`` /
``algorithm.kl_ctrl.kl_coef`` / ``ppo_epochs``, OpenRLHF's ``n_samples_per_prompt`` /
``rollout_batch_size`` / ``init_kl_coef`` / ``max_epochs``, and common custom names. Settings of
the critic, reward or reference model are never read as the policy's. A config's
``grpodyn_hparams`` (the settings a log that grpodyn wrote carries) is read by its exact names
(``meta.HPARAM_FIELDS``) before any other key.

verl has two KL terms, each behind its own switch: the actor's KL loss (``actor.use_kl_loss``,
coefficient ``actor.kl_loss_coef``) and the KL penalty in the reward
(``algorithm.use_kl_in_reward``, coefficient ``algorithm.kl_ctrl.kl_coef``; verl before that switch
applied it whenever the loss was off). The coefficient read is that of the term that is on; 0 where
neither is; none, with a note, where both are. A negative count (verl's ``total_training_steps:
-1``, "set by the program"; TRL's ``max_steps: -1``, "train by epochs"; verl's
``lr_warmup_steps: -1``, "use the ratio") is a placeholder, never a value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.meta import HPARAM_FIELDS, Hyperparameter, RunMeta
from grpodyn.theory.vocabulary import config_keys

__all__ = ["meta_from_config", "meta_beside", "CONFIG_FILES", "CONFIG_KEYS", "flatten",
           "configs_of_runs"]

#: File names read beside a log, in order (the first file that gives a value wins).
CONFIG_FILES = ("training_args.json", "grpo_config.json", "args.json", "hparams.json",
                "config.yaml", "config.yml", "hparams.yaml", "training_args.yaml",
                "config.json", "training_args.bin")

_OTHER_MODELS = {"critic", "reward_model", "ref", "rm", "teacher", "reward", "value_model"}

#: Settings that count steps, completions or prompts: a negative value is a placeholder.
_COUNTS = frozenset({"warmup_steps", "planned_steps", "logging_steps", "group_size", "batch",
                     "num_iterations", "length_cap"})

#: The key of a config under which grpodyn records a run's settings in its own names.
OWN_HPARAMS = "grpodyn_hparams"

#: field -> names, matched against the last components of a dotted key; first match wins. From
#: the one alias table of run settings, grpodyn.theory.vocabulary.
CONFIG_KEYS: dict[str, tuple[str, ...]] = config_keys()


def flatten(config: dict[str, Any], prefix: str = "", *, depth: int = 0,
            seen: set[int] | None = None) -> dict[str, Any]:
    """Return a nested config as ``{"a.b.c": value}`` (lists kept as values).

    A W&B ``config.yaml`` entry (``{value: ..., desc: ...}``) stands for its value, which is
    flattened in turn where it is a nested config (verl's, newer OpenRLHF's). Each dict is entered
    once, so shared or cyclic structures (YAML aliases, pickles) cannot blow it up.
    """
    seen = set() if seen is None else seen
    seen.add(id(config))
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        value = _entry_value(value)
        if isinstance(value, dict):
            if id(value) in seen or depth >= 12:
                continue
            out.update(flatten(value, name + ".", depth=depth + 1, seen=seen))
        else:
            out[name] = value
    return out


def _entry_value(value: Any) -> Any:
    """Return a config value; a W&B ``config.yaml`` entry (``{value:, desc:}``) gives its value."""
    if isinstance(value, dict) and set(value) <= {"value", "desc"} and "value" in value:
        return value["value"]
    return value


def _lookup(flat: dict[str, Any], names: tuple[str, ...], *, count: bool = False
            ) -> tuple[str, Any] | None:
    """Return the first (key, value) of the policy's whose key ends in one of ``names``.

    Empty values are passed over, and with ``count`` negative numbers too (placeholders).
    """
    for want in names:
        parts = want.split(".")
        for key, value in flat.items():
            components = key.split(".")
            if components[-len(parts):] == parts and not _OTHER_MODELS & set(components[:-1]):
                if value is None or (isinstance(value, str) and not value.strip()):
                    continue
                if count and (number := _finite(value)) is not None and number < 0:
                    continue
                return key, value
    return None


def _switch(flat: dict[str, Any], name: str) -> tuple[str, bool] | None:
    """Return the key and state of an on/off setting (a bool, or ``true``/``false`` text)."""
    hit = _lookup(flat, (name,))
    if hit is None:
        return None
    key, value = hit
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        value = value.strip().lower() == "true"
    return (key, value) if isinstance(value, bool) else None


def _verl_kl(flat: dict[str, Any], source: str, where: str
             ) -> tuple[Hyperparameter | None, str | None] | None:
    """Return verl's KL coefficient by its switches, and a note where it stays open.

    None where the config is not verl's (neither ``kl_loss_coef`` nor ``kl_ctrl.kl_coef``) or
    does not say whether the KL loss is on: the generic names are read then.
    """
    loss_coef = _lookup(flat, ("actor.kl_loss_coef", "kl_loss_coef"))
    reward_coef = _lookup(flat, ("kl_ctrl.kl_coef",))
    loss = _switch(flat, "use_kl_loss")
    if (loss_coef is None and reward_coef is None) or loss is None:
        return None
    loss_key, loss_on = loss
    reward = _switch(flat, "use_kl_in_reward")
    if reward is None:  # verl before use_kl_in_reward: the reward's KL whenever the loss is off
        reward_on, switches = not loss_on, f"{loss_key} {loss_on}, no use_kl_in_reward"
    else:
        reward_on, switches = reward[1], f"{loss_key} {loss_on}, {reward[0]} {reward[1]}"
    if loss_on and reward_on:
        named = "".join(f"; {hit[0]} {hit[1]}" for hit in (loss_coef, reward_coef) if hit)
        return None, (f"KL coefficient not determined: both KL terms are on ({switches} in "
                      f"{where}{named}): give the one to use (grpodyn sweep --hparams kl=K)")
    if not loss_on and not reward_on:
        return Hyperparameter(0, source, f"no KL term: {switches} in {where}"), None
    hit = loss_coef if loss_on else reward_coef
    value = None if hit is None else _finite(hit[1])
    if value is None:
        if hit is None and reward is None:
            return None, None  # a printed switch without the coefficient of its term
        return None, (f"KL coefficient not determined: {switches} in {where}, but the "
                      f"coefficient of that term is {'not named' if hit is None else hit[1]!r}")
    return Hyperparameter(value, source, f"{hit[0]} in {where} ({switches})"), None


def _verl_warmup(flat: dict[str, Any], meta: RunMeta, source: str, where: str) -> None:
    """Set verl's warm-up where its steps are unset (negative): the ratio of the planned steps."""
    steps = _lookup(flat, ("optim.lr_warmup_steps",))
    ratio = _lookup(flat, ("optim.lr_warmup_steps_ratio",))
    if meta.warmup_steps is not None or steps is None or ratio is None:
        return
    value, fraction = _finite(steps[1]), _finite(ratio[1])
    if value is None or value >= 0 or fraction is None or fraction < 0:
        return
    words = f"{steps[0]} {steps[1]} (use the ratio) and {ratio[0]} {ratio[1]} in {where}"
    if fraction == 0:
        meta.warmup_steps = Hyperparameter(0, source, words)
    elif meta.planned_steps is not None and isinstance(meta.planned_steps.value, int):
        meta.warmup_steps = Hyperparameter(int(fraction * meta.planned_steps.value), source,
                                           f"{words}, of {meta.planned_steps.value} planned "
                                           "steps")


def _normal_optimizer(value: Any) -> Any:
    text = str(value).lower()
    for name in ("adamw", "adam", "sgd", "adafactor", "lion", "rmsprop", "muon"):
        if name in text:
            return name
    return value


def _normal_schedule(value: Any) -> Any:
    text = str(value).lower().replace("schedulertype.", "")
    for name in ("cosine_with_min_lr", "cosine_with_restarts", "cosine", "linear",
                 "constant_with_warmup", "constant", "polynomial", "inverse_sqrt", "wsd"):
        if name in text:
            return name
    return value


def _finite(value: Any) -> int | float | None:
    """Return a finite number from a config value (numbers, numeric strings), else None."""
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eEnN") else int(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None  # no 5000-digit integers downstream
    return value if math.isfinite(value) else None


def meta_from_config(config: dict[str, Any], source: str, where: str, *,
                     notes: list[str] | None = None) -> RunMeta:
    """Return the hyperparameters a config dict names, with ``source`` and where it was found.

    Parameters
    ----------
    config : dict
        The config, nested or flat.
    source, where : str
        The provenance of the values (``file:<name>``) and the words for where they were read.
    notes : list of str, optional
        Where a note on a setting the config leaves open (verl's two KL terms both on) is
        appended.

    Returns
    -------
    RunMeta
        The hyperparameters found.
    """
    own = _entry_value(config.get(OWN_HPARAMS))
    flat = flatten({k: v for k, v in config.items() if k != OWN_HPARAMS})
    meta = RunMeta()
    for name, field in HPARAM_FIELDS.items() if isinstance(own, dict) else ():
        value = own.get(name)
        if not _set(meta, field, value, source, f"{name} in {OWN_HPARAMS}, {where}") \
                and value is not None and notes is not None:
            notes.append(f"{OWN_HPARAMS}.{name} = {value!r:.40} in {where} is not a value of "
                         f"{field}: not read")
    verl_kl = None if meta.kl is not None else _verl_kl(flat, source, where)
    if verl_kl is not None:
        meta.kl, note = verl_kl
        if note is not None and notes is not None:
            notes.append(note)
    for field, names in CONFIG_KEYS.items():
        hit = None if getattr(meta, field) is not None or (field == "kl" and verl_kl is not None) \
            else _lookup(flat, names, count=field in _COUNTS)
        if hit is not None:
            _set(meta, field, hit[1], source, f"{hit[0]} in {where}")
    betas = _lookup(flat, ("optim.betas", "betas", "adam_betas"))
    if betas is not None and isinstance(betas[1], (list, tuple)) and len(betas[1]) == 2:
        key, (b1, b2) = betas
        b1, b2 = _finite(b1), _finite(b2)
        if meta.momentum is None and b1 is not None:
            meta.momentum = Hyperparameter(b1, source, f"{key}[0] in {where}")
        if meta.beta2 is None and b2 is not None:
            meta.beta2 = Hyperparameter(b2, source, f"{key}[1] in {where}")
    _openrlhf_and_trl(flat, meta, source, where)
    _script_length(flat, meta, source, where)
    _optimizer_momentum(flat, meta, source, where)
    _verl_warmup(flat, meta, source, where)
    _ratio_warmup(flat, meta, source, where, notes)
    return meta


def _set(meta: RunMeta, field: str, value: Any, source: str, evidence: str) -> bool:
    """Set ``meta.field`` from a config value, where it is one the field takes; say whether.

    The optimizer and the schedule take a name, the others a finite number (a count not
    below 0); anything else is passed over.
    """
    if field in ("optimizer", "schedule"):
        if not isinstance(value, str):
            return False
        value = (_normal_optimizer if field == "optimizer" else _normal_schedule)(value)
    else:
        value = _finite(value)
        if value is None or (field in _COUNTS and value < 0):
            return False
    setattr(meta, field, Hyperparameter(value, source, evidence))
    return True


def _ratio_warmup(flat: dict[str, Any], meta: RunMeta, source: str, where: str,
                  notes: list[str] | None) -> None:
    """Turn a warm-up given as a share of the planned steps into steps, as the trainer does.

    transformers reads a ``warmup_steps`` below 1 as that share of the training steps
    (``ceil(total x share)``, ``TrainingArguments.get_warmup_steps``), and a ``warmup_ratio``
    (TRL's older settings; OpenRLHF's ``lr_warmup_ratio``) wherever ``warmup_steps`` is 0. The
    steps need the planned length; without it the warm-up is left unset, with a note.
    """
    given = meta.warmup_steps
    if given is not None and isinstance(given.value, (int, float)) and 0 < given.value < 1:
        share, words = float(given.value), f"{given.evidence} (below 1: a share of the steps)"
    elif given is None or given.value == 0:
        hit = _lookup(flat, ("warmup_ratio", "lr_warmup_ratio"))
        share = _finite(hit[1]) if hit is not None else None
        if share is None or not 0 < share <= 1:
            return
        words = f"{hit[0]} {hit[1]} in {where}"
    else:
        return
    planned = meta.value("planned_steps")
    if isinstance(planned, (int, float)) and planned > 0:
        meta.warmup_steps = Hyperparameter(math.ceil(planned * share), source,
                                           f"{words}, of {planned:g} planned steps")
        return
    meta.warmup_steps = None
    if notes is not None:
        notes.append(f"the settings' warm-up is not turned into steps: {words}, and the planned "
                     "length is not known")


def _openrlhf_and_trl(flat: dict[str, Any], meta: RunMeta, source: str, where: str) -> None:
    """Batch B and reuse where only a combination of settings gives them."""
    if "n_samples_per_prompt" in flat:  # OpenRLHF: rollout_batch_size counts prompts
        if meta.batch is None and isinstance(flat.get("rollout_batch_size"), int):
            meta.batch = Hyperparameter(flat["rollout_batch_size"], source,
                                        f"rollout_batch_size (OpenRLHF: prompts) in {where}")
        if meta.num_iterations is None and isinstance(flat.get("max_epochs"), int):
            meta.num_iterations = Hyperparameter(flat["max_epochs"], source,
                                                 f"max_epochs (OpenRLHF: PPO epochs) in {where}")
    if "num_generations" in flat and meta.batch is None:
        per_device = flat.get("per_device_train_batch_size")
        accumulation = flat.get("gradient_accumulation_steps", 1)
        g = flat["num_generations"]
        if all(isinstance(v, int) and v > 0 for v in (per_device, accumulation, g)):
            completions = per_device * accumulation
            if completions % g == 0:
                meta.batch = Hyperparameter(
                    completions // g, "inferred",
                    f"per_device_train_batch_size {per_device} x gradient_accumulation_steps "
                    f"{accumulation} / num_generations {g} in {where}, assuming one process "
                    "(TRL counts the batch in completions)")


#: A custom script's names for its planned length, read at the top level of its arguments only
#: (inside a section, ``sampling.steps`` or ``eval.num_steps``, they count something else).
_SCRIPT_LENGTH = ("total_steps", "num_training_steps", "num_train_steps", "max_train_steps",
                  "train_steps", "num_steps", "steps")


def _script_length(flat: dict[str, Any], meta: RunMeta, source: str, where: str) -> None:
    """Read the planned length of a custom script's arguments where no trainer name gave it.

    ``flat``: the flattened config, whose top-level keys are those without a dot.
    """
    if meta.planned_steps is not None:
        return
    for key in _SCRIPT_LENGTH:
        value = _finite(flat.get(key))
        if isinstance(value, int) and value > 0:
            meta.planned_steps = Hyperparameter(value, source, f"{key} in {where}")
            return


#: Keys of Adam's first-moment decay: the momentum of an Adam run only.
_ADAM_BETA1 = ("adam_beta1", "beta1", "optim.betas", "betas", "adam_betas")


#: Optimizers whose momentum is not Adam's beta1, as transformers builds them: SGD and RMSprop
#: with the momentum of ``optim_args`` (torch's default 0 without one); the others without one.
_OWN_MOMENTUM = {"sgd": "SGD", "rmsprop": "RMSprop", "adafactor": "Adafactor",
                 "adagrad": "Adagrad", "lomo": "LOMO", "adalomo": "AdaLomo"}
_OPTIM_ARGS_MOMENTUM = ("sgd", "rmsprop")


def _optimizer_momentum(flat: dict[str, Any], meta: RunMeta, source: str, where: str) -> None:
    """Give an SGD, RMSprop, Adafactor, Adagrad or (Ada)LOMO run its own momentum.

    TRL's arguments always hold ``adam_beta1``, which these optimizers do not read.
    transformers builds SGD and RMSprop with the momentum of ``optim_args``
    (``"momentum=0.9,nesterov=True"``) and torch's default 0 without one, the others without a
    first moment (0).
    """
    momentum = meta.momentum
    if (meta.optimizer is None or meta.optimizer.value not in _OWN_MOMENTUM or momentum is None
            or not momentum.evidence.split(" in ")[0].split("[")[0].endswith(_ADAM_BETA1)):
        return
    name = meta.optimizer.value
    given = flat.get("optim_args")
    words = {}
    if isinstance(given, str) and name in _OPTIM_ARGS_MOMENTUM:
        words = dict(item.split("=", 1) for item in given.replace(" ", "").split(",")
                     if item.count("=") == 1)
    value = _finite(words.get("momentum", 0.0))
    if value is None:  # optim_args names a momentum that is not a number: not Adam's either
        meta.momentum = None
        return
    told = (f"momentum={words['momentum']} in optim_args in {where}" if "momentum" in words
            else f"optim {name} in {where}: transformers builds {_OWN_MOMENTUM[name]} "
                 "without a momentum, 0")
    meta.momentum = Hyperparameter(value, source, f"{told} ({momentum.evidence} is Adam's)")


def _read_config(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """Return a config file as a dict, or (None, why not)."""
    try:
        if path.stat().st_size > 16 * 2**20:
            return None, f"{path.name}: larger than a config file, skipped"
        if path.suffix == ".bin":
            from grpodyn.empirical.logs.pickled import PickleReadError, read_pickled_args

            try:
                return read_pickled_args(path), None
            except PickleReadError as exc:
                return None, f"{path.name}: not read ({exc})"
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return None, f"{path.name}: cannot read ({exc.strerror})"
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            return None, f"{path.name}: reading YAML needs PyYAML (pip install grpodyn[logs])"
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError) as exc:
            return None, f"{path.name}: not valid YAML ({type(exc).__name__})"
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None, f"{path.name}: not valid JSON, skipped"
    return (data, None) if isinstance(data, dict) else (None, f"{path.name}: not a mapping")


def meta_beside(folder: Path) -> tuple[RunMeta, list[str]]:
    """Hyperparameters from the config files in ``folder`` and notes on files not read."""
    meta, notes = RunMeta(), []
    for name in CONFIG_FILES:
        path = folder / name
        if not path.is_file():
            continue
        config, why = _read_config(path)
        if config is None:
            notes.append(why or f"{name}: not read")
            continue
        meta = meta.merged(meta_from_config(config, f"file:{name}", name, notes=notes))
    return meta, notes


def configs_of_runs(configs: list[tuple[int, dict[str, Any]]], starts: list[int]
                    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[str]]:
    """Return the config the runs of a log share, each run's own, and notes.

    ``configs`` are (records read before it was printed, config) and ``starts`` the index of
    each run's first record. The first config printed while a run was in progress (or before
    its first step) is its own, read for it; a run that printed none reads the settings the
    others share. The runs are named as
    ``records.split_restarts`` names them (``run1``, ``run2``, ...).
    """
    if len(starts) == 1:
        return (configs[0][1] if configs else {}), {}, []
    own: list[dict[str, Any] | None] = [None] * len(starts)
    for position, config in configs:
        index = max(k for k, start in enumerate(starts) if start <= position)
        if own[index] is None:
            own[index] = flatten(config)
    printed = [config for config in own if config is not None]
    if not printed:
        return {}, {}, []
    shared = {key: value for key, value in printed[0].items()
              if all(key in config and config[key] == value for config in printed[1:])}
    notes = [f"run{k} printed no config of its own: the settings the others share are read "
             "for it too" for k, config in enumerate(own, start=1) if config is None]
    differ = sorted({key for config in printed for key in config} - set(shared))
    if differ:
        shown = "; ".join(f"{key}: " + ", ".join(str(c.get(key, "absent")) for c in printed)
                          for key in differ[:3])
        notes.append(f"the {len(printed)} runs printed configs that differ in {len(differ)} "
                     f"setting{'s' if differ[1:] else ''} ({shown}"
                     f"{'; ...' if differ[3:] else ''}): each run reads its own")
    by_run = {f"run{k}": config for k, config in enumerate(own, start=1) if config is not None}
    return shared, by_run, notes
