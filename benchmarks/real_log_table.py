"""Acceptance table of the loaders: every real log through ``grpodyn runs`` and ``grpodyn fit``.

``python benchmarks/real_log_table.py [DIR]`` (default DIR: ``../shared/data/real_logs``) runs
both commands in-process on every log and prints a markdown table: format, runs, reward points,
first-last step, against what the corpus's README and manifest in DIR say (copied below by
hand, not derived from the loaders), and whether ``fit`` succeeded. Exit code 1 if any log fails
or disagrees.

The manifest counts steps of console logs without a step field as the ordinal of the logged dict
(``ordinal`` below); the loaders read the real step (progress counter or logging interval), so
there the span must be the ordinal span times one logging interval.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from grpodyn.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]

#: file-name prefix -> (runs, reward points in all runs, first step, last step, ordinal steps)
EXPECTED: dict[str, tuple[int, int, float | None, float | None, bool]] = {
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_sweep":
        (1, 40, 1, 40, False),
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_clip":
        (1, 200, 1, 200, False),
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_baselines":
        (1, 200, 1, 200, False),
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_length":
        (1, 200, 1, 200, False),
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_group":
        (1, 200, 1, 200, False),
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_train_loop":
        (1, 200, 1, 200, False),
    "JuncyLu__trl_DAPO__training_logs": (1, 49, 1, 49, True),
    "JuncyLu__trl_DAPO__grpo-Qwen2.5-VL": (1, 24, 10, 240, False),
    "Radar-Lei__SCU_TSC__": (1, 69, 1, 69, True),
    "Rusheel86__Chaos-Economy__trainer_state": (1, 40, 5, 200, False),
    "Rusheel86__Chaos-Economy__training_logs": (1, 50, 5, 250, False),
    "Rusheel86__Chaos-Economy__vsr-new": (1, 100, 1, 100, True),
    "esmaeil-abedi-dev__verifier-as-reward__training_log_warmstart": (1, 20, 25, 500, False),
    "esmaeil-abedi-dev__verifier-as-reward__training_log_qwen05b": (1, 20, 20, 400, False),
    "jorahn__rookworld-rlvr": (3, 650, 1, 642, False),
    "jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251129": (1, 235, 1, 261, False),
    "jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251203": (1, 215, 1, 238, False),
    "Ning-Guo__hotpotqa-agent": (1, 93, 1, 93, True),
    "Coicozoi__minimind-from-scratch": (1, 9751, 1, 9751, False),
    "josephdutoit__probability-aligned-llms": (1, 197, 1, 197, True),
    # the first set (README.md): no MANIFEST row; counts from its table
    "IMJONEZZ__UnslothGRPO": (1, 250, 1, 250, False),
    "lzhihan__grpo-math-pipeline": (1, 120, 10, 1200, False),
    "ijinyu1113__Learned-Remasking": (1, 1000, None, None, False),
    "garg-aayush__building-from-scratch": (6, None, None, None, False),  # type: ignore[dict-item]
    "Sunshine535__nips-grpo-dynamics": (1, 200, 1, 200, True),
}


def _json(argv: list[str]) -> tuple[int, dict | str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    return code, (json.loads(out.getvalue()) if code == 0 else err.getvalue().strip())


def _check(name: str, listing: dict) -> str:
    want = next((v for k, v in EXPECTED.items() if name.startswith(k)), None)
    if want is None:
        return "no expectation"
    runs, points, first, last, ordinal = want
    got = listing["runs"]
    problems = []
    if len(got) != runs:
        problems.append(f"{len(got)} runs, expected {runs}")
    total = sum(r["n_points"] for r in got)
    if points is not None and total != points:
        problems.append(f"{total} points, expected {points}")
    lo, hi = min(r["first_step"] for r in got), max(r["last_step"] for r in got)
    if first is not None and not ordinal and (lo, hi) != (first, last):
        problems.append(f"steps {lo:g}-{hi:g}, expected {first}-{last}")
    if ordinal and first is not None:
        interval = lo / first
        if not (interval.is_integer() and hi == interval * last):
            problems.append(f"steps {lo:g}-{hi:g} are not {first}-{last} x one interval")
        elif interval != 1:
            return f"yes (ordinal {first}-{last} x logging interval {interval:g})"
    return "yes" if not problems else "NO: " + "; ".join(problems)


def main() -> int:
    default = ROOT.parent / "shared" / "data" / "real_logs"
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    print("| file | format | runs | reward points | first-last step | matches README/MANIFEST "
          "| fit (best model) |")
    print("|---|---|---|---|---|---|---|")
    failures = 0
    for path in sorted(p for p in folder.iterdir() if p.name not in ("README.md", "MANIFEST.md")):
        short = "__".join(path.name.split("__")[:2]) + "__" + path.name.split("__", 2)[-1][-40:]
        code, listing = _json(["runs", str(path), "--json"])
        if code != 0:
            failures += 1
            print(f"| {short} | ERROR | | | | {listing} | |")
            continue
        verdict = _check(path.name, listing)
        code, fit = _json(["fit", str(path), "--json"])
        fitted = (fit["best"] or f"none trusted (weight on {fit['weight_on']})") if code == 0 \
            else f"ERROR {fit}"
        failures += (code != 0) + (not verdict.startswith(("yes", "no expectation")))
        runs = listing["runs"]
        points = "+".join(str(r["n_points"]) for r in runs)
        span = ", ".join(f"{r['first_step']:g}-{r['last_step']:g}" for r in runs)
        print(f"| {short} | {listing['format']} | {len(runs)} | {points} | {span} | {verdict} "
              f"| {fitted} |")
    print(f"\n{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
