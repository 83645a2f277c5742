"""Check whether the G the advice recommends for groups without spread restores learning.

Where the diagnosis flags advantage degeneracy, ``grpodyn advise`` recommends the least G at
which identical prompts at the run's late success rate give half the groups a reward spread
(``empirical/logs/group_advice.py``). The categorical simulator of ``studies/diagnosis`` can
rerun the same run (same seed, same prompts) at that G. Outcomes, fixed before any fresh seed
was run:

- restored: the late exact success at the recommended G is at least twice the original run's
  and at least 0.05 above it;
- half spread: the late exact zero-std share at the recommended G is at most 0.5 (the bound's
  own prediction, exact for identical prompts; prompts that differ need more, so this is
  expected to fail where their success rates spread);
- monotone: the run at half the recommended G ends below the run at the recommended G;
- false advice: runs of the other families whose advice changes G.

Run ``python studies/advice/group_size_check.py --seeds FIRST-LAST``; it writes
``group_size_check_FIRST-LAST.md`` in ``studies/advice/results/``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT))  # studies/ is a folder of the repository, not of the package

from grpodyn.empirical.logs.advice import advise_log  # noqa: E402
from grpodyn.empirical.logs.loaders import load_run  # noqa: E402
from grpodyn.ground import write_atomic  # noqa: E402
from studies.diagnosis.categorical_sim import (  # noqa: E402
    FAMILIES,
    SimConfig,
    settings,
    simulate,
    write_run,
)

DEGENERATE = "advantage_degeneracy"


def late(config: SimConfig, seed: int) -> tuple[float, float]:
    """Return the exact (success, zero-std share) over the last quarter of one simulated run."""
    _, truth = simulate(config, seed=seed)
    quarter = truth[-(truth.shape[0] // 4):]
    return float(quarter[:, 0].mean()), float(quarter[:, 3].mean())


def advised_group_size(family: str, seed: int, folder: Path) -> tuple[SimConfig, int, int | None]:
    """Return the run's settings, its simulator seed and the G its advice recommends."""
    config = settings(family, seed)
    sim_seed = 10_000 * FAMILIES.index(family) + seed
    log, _ = simulate(config, seed=sim_seed)
    path = write_run(folder / f"{family}_{seed}", log, config=config, keys="full", with_g=True,
                     label=family, seed=seed)
    return config, sim_seed, advise_log(load_run(path)).recommendation["group_size"]


def main() -> None:
    """Advise every run of the seeds, rerun the degenerate ones at the advised G, tabulate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", required=True, help="FIRST-LAST (inclusive)")
    args = parser.parse_args()
    first, last = (int(s) for s in args.seeds.split("-"))
    rows, false_advice, others = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, last + 1):
            for family in FAMILIES:
                config, sim_seed, g = advised_group_size(family, seed, Path(tmp))
                if family != DEGENERATE:
                    others += 1
                    if g != config.group_size:
                        false_advice.append(f"{family}_{seed} (G {config.group_size} -> {g})")
                    continue
                before = late(config, sim_seed)
                after = late(replace(config, group_size=g), sim_seed) if g else (np.nan, np.nan)
                half = late(replace(config, group_size=max(2, g // 2)), sim_seed) if g \
                    else (np.nan, np.nan)
                rows.append((seed, config.group_size, g, before, after, half))
    advised = [r for r in rows if r[2] and r[2] > r[1]]
    restored = [r for r in advised if r[4][0] >= max(2 * r[3][0], r[3][0] + 0.05)]
    spread = [r for r in advised if r[4][1] <= 0.5]
    monotone = [r for r in advised if r[5][0] < r[4][0]]
    lines = [f"# The advised G for groups without spread, seeds {args.seeds}", "",
             f"`python studies/advice/group_size_check.py --seeds {args.seeds}`", "",
             f"- degenerate runs with a larger G advised: {len(advised)} of {len(rows)}",
             f"- restored (late success x2 and +0.05 at the advised G): {len(restored)} of "
             f"{len(advised)}",
             f"- half spread (late zero-std share <= 0.5 at the advised G): {len(spread)} of "
             f"{len(advised)}",
             f"- monotone (half the advised G ends lower): {len(monotone)} of {len(advised)}",
             f"- false advice (another family's G changed): {len(false_advice)} of {others}"
             + (f": {', '.join(false_advice)}" if false_advice else ""), "",
             "| seed | G | advised G | success late (G / advised / half) | zero-std late "
             "(G / advised / half) |", "|---|---|---|---|---|"]
    lines += [f"| {s} | {g0} | {g} | {b[0]:.3f} / {a[0]:.3f} / {h[0]:.3f} | {b[1]:.2f} / "
              f"{a[1]:.2f} / {h[1]:.2f} |" for s, g0, g, b, a, h in rows]
    out = ROOT / "studies" / "advice" / "results" / f"group_size_check_{args.seeds}.md"
    write_atomic(out, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
