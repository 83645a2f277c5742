"""Real GRPO on CPU: a tiny causal LM, a locally built tokenizer, and generated arithmetic tasks.

Nothing is downloaded. The tokenizer is character-level (digits and ``+-*=``) built with
``tokenizers``; the model is a two-layer Llama initialised from a seed; the training task is
single-digit addition ("3+5=" -> "8"), and eight held-out families (longer numbers, other
operations, other formats) measure transfer. A short supervised warm-up brings the initial
reward into [0.1, 0.5]; then TRL's GRPOTrainer trains with a verifiable reward. Requires the
``trl`` extra (torch, transformers, trl, datasets).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # optional dependencies (the trl extra), for annotations only
    from transformers import (
        PreTrainedModel as Model,
    )
    from transformers import (
        PreTrainedTokenizerFast as HFTokenizer,
    )
    from transformers import (
        TrainerControl,
        TrainerState,
        TrainingArguments,
    )

__all__ = ["TASK_FAMILIES", "TRAIN_FAMILY", "build_tokenizer", "build_model", "make_prompts",
           "warm_up", "accuracy", "GRPORunSettings", "run_grpo", "load_tokenizer"]

_CHARS = "0123456789+-*="


def _add(rng: random.Random) -> tuple[str, str]:
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    return f"{a}+{b}=", str(a + b)


#: Task families: name -> generator of (prompt, answer). "add" is the training family.
TASK_FAMILIES: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "add": _add,
    "add_two_digit": lambda r: (lambda a, b: (f"{a}+{b}=", str(a + b)))(r.randint(10, 49),
                                                                       r.randint(0, 9)),
    "add_three_terms": lambda r: (lambda a, b, c: (f"{a}+{b}+{c}=", str(a + b + c)))(
        r.randint(0, 9), r.randint(0, 9), r.randint(0, 9)),
    "subtract": lambda r: (lambda a, b: (f"{max(a, b)}-{min(a, b)}=", str(abs(a - b))))(
        r.randint(0, 9), r.randint(0, 9)),
    "subtract_negative": lambda r: (lambda a, b: (f"{a}-{b}=", str(a - b)))(
        r.randint(0, 4), r.randint(5, 9)),
    "multiply": lambda r: (lambda a, b: (f"{a}*{b}=", str(a * b)))(r.randint(0, 9),
                                                                  r.randint(0, 9)),
    "add_leading_zero": lambda r: (lambda a, b: (f"0{a}+{b}=", str(a + b)))(r.randint(0, 9),
                                                                           r.randint(0, 9)),
    "add_double_equals": lambda r: (lambda a, b: (f"{a}+{b}==", str(a + b)))(r.randint(0, 9),
                                                                            r.randint(0, 9)),
    "complement_ten": lambda r: (lambda a: (f"10-{a}=", str(10 - a)))(r.randint(0, 9)),
}
TRAIN_FAMILY = "add"


def build_tokenizer() -> HFTokenizer:
    """Return a character-level fast tokenizer for digits and ``+-*=`` with pad, bos, eos."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2, **{c: i + 3 for i, c in enumerate(_CHARS)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>",
                                        bos_token="<bos>", eos_token="<eos>")
    tokenizer.padding_side = "left"
    return tokenizer


def load_tokenizer(path: str | Path) -> HFTokenizer:
    """Return a tokenizer saved by ``save_pretrained`` (local files only)."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(path), local_files_only=True)
    tokenizer.padding_side = "left"
    return tokenizer


def build_model(*, seed: int, hidden: int = 64, layers: int = 2, heads: int = 4
                ) -> Model:
    """Return a tiny Llama initialised from ``seed`` (about 70 thousand parameters)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=3 + len(_CHARS), hidden_size=hidden,
                         intermediate_size=2 * hidden, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=32, pad_token_id=0, bos_token_id=1,
                         eos_token_id=2, tie_word_embeddings=True)
    return LlamaForCausalLM(config)


def make_prompts(family: str, n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (prompt, answer) pairs of a task family."""
    if family not in TASK_FAMILIES:
        raise ValueError(f"unknown task family {family!r}; known: {', '.join(TASK_FAMILIES)}")
    rng = random.Random(seed)
    return [TASK_FAMILIES[family](rng) for _ in range(n)]


def clean_answer(text: str) -> str:
    """Return a completion without spaces, the form answers are compared in.

    Parameters
    ----------
    text : str
        A decoded completion.

    Returns
    -------
    str
        ``text`` with every space removed and the ends stripped.
    """
    return text.replace(" ", "").strip()


def accuracy(model: Model, tokenizer: HFTokenizer, family: str, *, n: int = 256, seed: int = 12345,
             sample: bool = True) -> float:
    """Share of correct answers (sampled at temperature 1, as GRPO samples, or greedy)."""
    import torch

    pairs = make_prompts(family, n, seed)
    enc = tokenizer([p for p, _ in pairs], return_tensors="pt", padding=True)
    was_training = model.training
    model.eval()
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=4, do_sample=sample, temperature=1.0,
                             pad_token_id=0, eos_token_id=2)
    model.train(was_training)
    width = enc["input_ids"].shape[1]
    answers = [clean_answer(tokenizer.decode(seq[width:], skip_special_tokens=True)) for seq in out]
    return sum(a == b for a, (_, b) in zip(answers, pairs, strict=True)) / n


def warm_up(model: Model, tokenizer: HFTokenizer, *, band: tuple[float, float] = (0.1, 0.5),
            lr: float = 3e-3, batch: int = 32, max_steps: int = 600, seed: int = 0
            ) -> dict[str, Any]:
    """Supervised steps on the training family until the sampled accuracy enters ``band``."""
    import torch

    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for step in range(max_steps):
        pairs = [TASK_FAMILIES[TRAIN_FAMILY](rng) for _ in range(batch)]
        enc = tokenizer([p + a + "<eos>" for p, a in pairs], return_tensors="pt", padding=True)
        labels = enc["input_ids"].clone()
        labels[enc["attention_mask"] == 0] = -100
        loss = model(**enc, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 9:
            acc = accuracy(model, tokenizer, TRAIN_FAMILY, n=256, seed=seed + step)
            if band[0] <= acc <= band[1]:
                return {"steps": step + 1, "accuracy": acc}
    raise RuntimeError(f"warm-up did not reach accuracy in {band} within {max_steps} steps")


@dataclass(frozen=True)
class GRPORunSettings:
    """Settings of one GRPO run on the tiny model (TRL names in brackets)."""

    group_size: int = 4  # [num_generations]
    prompts_per_step: int = 8
    steps: int = 300  # [max_steps]
    learning_rate: float = 1e-3
    kl: float = 0.02  # [beta]
    num_iterations: int = 1
    steps_per_generation: int | None = None
    seed: int = 0
    warmup_steps: int = 0  # [warmup_steps]: linear ramp of the learning rate from 0
    optim: str | None = None  # [optim]: None keeps TRL's default (AdamW); "sgd" for SGD
    optim_args: str | None = None  # [optim_args], e.g. "momentum=0.9" for heavy-ball SGD


def run_grpo(model: Model, tokenizer: HFTokenizer, settings: GRPORunSettings, *,
             output_dir: str | Path,
             callbacks: list | None = None, checkpoint_steps: tuple[int, ...] = (),
             extra_rewards: list[Callable] | None = None) -> dict[str, Any]:
    """Train with TRL's GRPOTrainer.

    Returns a trainer_state-like dict with the log history and the trained ``model``.

    ``checkpoint_steps``: steps at which a copy of the model's weights is kept in memory
    (returned under ``"checkpoints"``, for transfer evaluation and curvature probes).
    ``extra_rewards``: reward functions added to correctness (TRL sums them; each is logged as
    ``rewards/<name>/mean``), e.g. a hackable bonus.
    """
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    pairs = make_prompts(TRAIN_FAMILY, 4096, settings.seed + 1)
    dataset = Dataset.from_dict({"prompt": [p for p, _ in pairs],
                                 "answer": [a for _, a in pairs]})

    def correct(completions: list[str], answer: list[str], **_: Any) -> list[float]:
        return [1.0 if clean_answer(c) == a else 0.0
                for c, a in zip(completions, answer, strict=True)]

    kept: dict[int, dict] = {}

    class KeepWeights(TrainerCallback):
        def on_step_end(self, args: TrainingArguments, state: TrainerState,
                        control: TrainerControl, model: Model | None = None,
                        **kwargs: Any) -> None:
            if state.global_step in checkpoint_steps:
                kept[state.global_step] = {k: v.detach().clone()
                                           for k, v in model.state_dict().items()}

    if 0 in checkpoint_steps:
        kept[0] = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # TRL builds the KL reference model from the policy's path: give it a local one
    start = Path(output_dir) / "initial_model"
    model.save_pretrained(start)
    tokenizer.save_pretrained(start)
    extra = {}
    if settings.steps_per_generation is not None:
        extra["steps_per_generation"] = settings.steps_per_generation
    if settings.optim is not None:
        extra["optim"] = settings.optim
    if settings.optim_args is not None:
        extra["optim_args"] = settings.optim_args
    args = GRPOConfig(
        output_dir=str(output_dir), per_device_train_batch_size=settings.prompts_per_step
        * settings.group_size, num_generations=settings.group_size, max_completion_length=4,
        learning_rate=settings.learning_rate, warmup_steps=settings.warmup_steps,
        lr_scheduler_type="constant_with_warmup" if settings.warmup_steps else "constant",
        beta=settings.kl,
        num_iterations=settings.num_iterations, logging_steps=1, max_steps=settings.steps,
        report_to=[], use_cpu=True, seed=settings.seed, temperature=1.0, save_strategy="no",
        disable_tqdm=True, **extra)
    trainer = GRPOTrainer(model=str(start), reward_funcs=[correct, *(extra_rewards or [])],
                          args=args,
                          train_dataset=dataset,
                          processing_class=tokenizer,
                          callbacks=[KeepWeights(), *(callbacks or [])])
    trainer.train()
    history = [h for h in trainer.state.log_history if "reward" in h]
    return {"global_step": trainer.state.global_step, "log_history": history,
            "grpodyn_settings": settings.__dict__, "checkpoints": kept, "model": trainer.model}


def write_trainer_state(result: dict[str, Any], path: str | Path) -> Path:
    """Return the log of :func:`run_grpo` as a TRL trainer_state.json (weights left out)."""
    path = Path(path)
    state = {k: v for k, v in result.items() if k not in ("checkpoints", "model")}
    path.write_text(json.dumps(state, indent=1))
    return path
