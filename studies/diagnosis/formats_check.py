"""Check that the diagnosis reads one run the same in every log format it loads.

Each run of the categorical simulator is written in four formats that carry the same numbers:
TRL's ``trainer_state.json`` (the reference), TRL's console (one printed dict per logging
step, no step numbers), a W&B history (``train/`` names, ``_step``) and verl's console
(``step:N - key:value`` with verl's names). verl logs no zero-std share and counts epochs by
their index, so its reference is the TRL file written without the zero-std share and with the
epoch's index. The diagnosis (state, primary mode, every flag, the early warning) and the
advice (direction and lr ratio) of each copy are compared with the reference's; any difference
is a loader or alias defect, since the numbers are the same.

Run ``python studies/diagnosis/formats_check.py [--seeds FIRST-LAST]`` (default 1000-1011, seen
seeds: this checks the loaders, it scores no label); it writes
``studies/diagnosis/results/formats_check.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT))  # studies/ is a folder of the repository, not of the package

from grpodyn.empirical.diagnostics.diagnose import diagnose  # noqa: E402
from grpodyn.empirical.logs.advice import advise_log  # noqa: E402
from grpodyn.empirical.logs.loaders import load_run  # noqa: E402
from grpodyn.ground import write_atomic  # noqa: E402
from studies.diagnosis.categorical_sim import FAMILIES, settings, simulate  # noqa: E402

#: TRL's metric names in the simulator's log -> verl's names of the same quantity
VERL = {"reward": "critic/score/mean", "reward_std": "critic/score/std",
        "entropy": "actor/entropy", "kl": "actor/kl_loss",
        "completion_length": "response_length/mean",
        "completions/clipped_ratio": "response_length/clip_ratio", "learning_rate": "actor/lr",
        "epoch": "training/epoch", "eval_reward": "val-core/sim/reward/mean@1"}


def _trl_state(folder: Path, log: list[dict], steps: int) -> Path:
    folder.mkdir(parents=True)
    return write_atomic(folder / "trainer_state.json",
                        json.dumps({"log_history": log, "global_step": steps}))


def _trl_console(path: Path, log: list[dict], steps: int) -> Path:
    """Write TRL's console: each logging step's dict, without its step, after the progress bar."""
    lines = []
    for entry in log:
        step = entry["step"]
        if "reward" in entry:  # an evaluation's dict follows its step's, with no bar of its own
            lines.append(f"{100 * step // steps:3d}%|#| {step}/{steps} [00:{step % 60:02d}<00:00,"
                         " 1.00s/it]")
        lines.append(str({k: v for k, v in entry.items() if k != "step"}))
    return write_atomic(path, "\n".join(lines) + "\n")


def _wandb(path: Path, log: list[dict]) -> Path:
    """Write a W&B history: a JSON object a step, the Trainer's ``train/`` and ``eval/`` names."""
    rows = [{"_step": entry["step"], **{("eval/" + k[5:] if k.startswith("eval_") else
                                         "train/" + k): v
                                        for k, v in entry.items() if k != "step"}}
            for entry in log]
    return write_atomic(path, "\n".join(json.dumps(r) for r in rows) + "\n")


def _verl(path: Path, log: list[dict]) -> Path:
    """Write verl's console: ``step:N - name:value`` with verl's names (no zero-std share)."""
    lines = [f"step:{entry['step']} - " + " - ".join(
        f"{VERL[k]}:{v}" for k, v in entry.items() if k in VERL) for entry in log]
    return write_atomic(path, "\n".join(lines) + "\n")


def _verl_like(log: list[dict]) -> list[dict]:
    """Return the TRL log without what verl lacks, the epoch as its index (as verl counts)."""
    return [{k: (math.floor(v) if k == "epoch" else v) for k, v in entry.items()
             if k != "frac_reward_zero_std"} for entry in log]


def summary(path: Path) -> dict:
    """Return what a user reads first: the state, primary mode, flags, warning and advice."""
    run = load_run(path)
    d = diagnose(run)
    advice = advise_log(run)
    warning = d.early_warning["step"] if d.early_warning else None
    return {"state": d.state, "primary": d.primary,
            "flags": sorted(m for m, v in d.modes.items() if v.flag),
            "warning": warning, "advice": (advice.recommendation["direction"],
                                           round(advice.recommendation["lr_ratio"], 3))}


def check(seed: int, family: str, folder: Path) -> list[tuple[str, str, dict, dict]]:
    """Return (run, format, reference, copy) for every copy that reads differently."""
    config = settings(family, seed)
    log, _ = simulate(config, seed=10_000 * FAMILIES.index(family) + seed)
    base = folder / f"{family}_{seed}"
    trl = summary(_trl_state(base / "trl", log, config.steps))
    verl_ref = summary(_trl_state(base / "trl_verl_like", _verl_like(log), config.steps))
    copies = {"trl_console": (_trl_console(base.with_suffix(".log"), log, config.steps), trl),
              "wandb": (_wandb(base.with_suffix(".jsonl"), log), trl),
              "verl": (_verl(base.with_suffix(".verl.log"), _verl_like(log)), verl_ref)}
    out = []
    for name, (path, reference) in copies.items():
        got = summary(path)
        if got != reference:
            out.append((base.name, name, reference, got))
    return out


def main() -> None:
    """Write every seed's runs in four formats and compare what each reads."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1000-1011", help="FIRST-LAST (inclusive)")
    args = parser.parse_args()
    first, last = (int(s) for s in args.seeds.split("-"))
    differences, runs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, last + 1):
            for family in FAMILIES:
                differences += check(seed, family, Path(tmp))
                runs += 1
    lines = ["# The same runs in four formats", "",
             f"`python studies/diagnosis/formats_check.py --seeds {args.seeds}`: {runs} runs, "
             f"each in TRL's console, a W&B history and verl's console against TRL's "
             f"trainer_state.json; {len(differences)} copies read differently.", ""]
    if differences:
        lines += ["| run | format | reference | copy |", "|---|---|---|---|"]
        lines += [f"| {r} | {f} | {ref} | {got} |" for r, f, ref, got in differences]
    out = ROOT / "studies" / "diagnosis" / "results" / "formats_check.md"
    write_atomic(out, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
