"""Measure whether a log tells a high-lr collapse (this simulator) from a concentration (tiny runs).

On seeds 100-129 the diagnosis names dynamical instability in 1 of 27 runs so labelled: a high-lr
run whose reward falls 0.2-0.5 from its peak into a collapsed policy is read as concentration,
because a reward fall counts as an instability only when the policy left its start (the KL
changed x3 or the entropy rose x3), and a falling entropy is read as concentration's own sign.
The candidate revision examined here counts an entropy *fall* of x3 as the policy moving too,
so that a deep fall with a collapsing entropy is an instability. This script measures what it
does on every labelled source the project holds, all of them seen before (a revision is frozen
before fresh seeds score it) (the third simulator's seeds 100-129, the tiny-model TRL test bed,
the prompt-pool and bandit test beds, the categorical simulator's design seeds 200-211 and
300-305):

- for each run, the reward's fall from its best smoothed level, where the best lies (share of
  the run), the entropy and KL late over their start, and the reward late below its start;
- the calls of the current diagnosis and of the candidate (instability where the candidate's
  collapse flags), per label: how many runs the candidate moves, from which call to which.

Run ``python studies/diagnosis_third_sim/collapse_reading.py`` (about 3 minutes, two cores); it
writes ``results/collapse_reading.md``.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]  # the simulator beside this file; studies/ of the checkout

import sim  # noqa: E402

from grpodyn.empirical.diagnostics import testbed  # noqa: E402
from grpodyn.empirical.diagnostics.diagnose import diagnose  # noqa: E402
from grpodyn.empirical.diagnostics.instability import metric_growth  # noqa: E402
from grpodyn.empirical.diagnostics.series import segments, smooth, window_mean  # noqa: E402
from grpodyn.empirical.logs.loaders import Run, load_run  # noqa: E402
from grpodyn.ground import write_atomic  # noqa: E402
from studies.diagnosis.categorical_sim import FAMILIES, label_of, settings, simulate  # noqa: E402
from studies.diagnosis.categorical_sim import write_run as write_categorical  # noqa: E402

CATEGORICAL_KEYS = ("full", "no_spread", "no_entropy", "reward_only")
MOVED = np.log(3.0)  # the diagnosis's factor for a policy that left its start


def fall_reading(run: Run) -> dict:
    """Return the fall of the reward and how far the policy moved, as the diagnosis reads them.

    The fall: the best centred moving mean (window a tenth of the run, at least 10 points)
    less the late quarter's mean; the candidate's collapse flags where it reaches 0.2 (the
    diagnosis's collapse score of 0.5), the best lies in the first three quarters and either
    the KL or the entropy changed by a factor of 3 in either direction, each as its late over
    its early mean (the diagnosis's reading of the entropy; the diagnosis reads the KL's late
    mean over its first half's median instead). The rise: the best centred moving mean less
    the early segment's mean (a rise then a fall, against a fall from the start).
    """
    early, late, _ = segments(run.n_points)
    window = max(10, run.n_points // 10)
    level = smooth(run.reward, window)
    best = int(np.nanargmax(level))
    fall = float(level[best] - window_mean(level, late))
    entropy, kl = (metric_growth(run, name, early, late) for name in ("entropy", "kl"))
    rise = float(level[best] - window_mean(run.reward, early))
    moved = [abs(np.log(g)) for g in (entropy, kl) if np.isfinite(g) and g > 0]
    flags = fall >= 0.2 and best < run.n_points * 3 // 4 and (not moved or max(moved) >= MOVED)
    return {"fall": fall, "best_at": best / run.n_points, "rise": rise, "entropy": entropy,
            "kl": kl,
            "below_start": window_mean(run.reward, early) - window_mean(level, late),
            "candidate_flags": flags}


def record(source: str, name: str, label: str, run: Run) -> dict:
    """Diagnose one run; return its label, both calls and its fall reading."""
    current = testbed.called(diagnose(run))
    reading = fall_reading(run)
    candidate = "dynamical_instability" if reading["candidate_flags"] else current
    return {"source": source, "name": name, "label": label, "current": current,
            "candidate": candidate, **reading}


def third_sim(seeds: range, folder: Path) -> list[dict]:
    """Simulate, write and read this simulator's runs of ``seeds``."""
    rows = []
    for seed in seeds:
        for name, _, _, keyset, _, log, args, state in sim.runs_of_seed(seed):
            run = load_run(sim.write_run(folder / name, log, args, keyset))
            rows.append(record("third simulator 100-129", name, sim.label_of(state)[0], run))
    return rows


def categorical(seeds: list[int], folder: Path) -> list[dict]:
    """Simulate, write and read the categorical simulator's runs of ``seeds`` (its labels)."""
    rows = []
    for family in FAMILIES:
        for seed in seeds:
            config = settings(family, seed)
            log, truth = simulate(config, seed=10_000 * FAMILIES.index(family) + seed)
            label = label_of(family, truth)
            name = f"cat_{family}_{seed}"
            path = write_categorical(folder / name, log, config=config,
                                     keys=CATEGORICAL_KEYS[seed % 4], with_g=bool(seed % 2),
                                     label=label, seed=seed)
            rows.append(record("categorical 200-211, 300-305", name, label, load_run(path)))
    return rows


def test_beds() -> list[dict]:
    """Read the three shipped test beds (tiny TRL runs, prompt pool, bandit)."""
    beds = {"tiny TRL test bed": testbed.tiny_testbed(),
            "prompt-pool test bed": testbed.pool_testbed(seeds=testbed.POOL_DESIGN_SEEDS),
            "bandit test bed": testbed.bandit_testbed(seeds=5)}
    return [record(source, case.name, case.label, case.run)
            for source, cases in beds.items() for case in cases]


def span(values: list[float]) -> str:
    """Return 'min-max' of the finite values, or '-'."""
    finite = [v for v in values if np.isfinite(v)]
    return f"{min(finite):.2f}-{max(finite):.2f}" if finite else "-"


def render(rows: list[dict]) -> str:
    """Return the report: the fall readings of the runs that fell, and the calls that move."""
    fell = [r for r in rows if r["fall"] >= 0.15]
    lines = ["# A deep fall with a collapsing entropy: instability or concentration?", "",
             "`python studies/diagnosis_third_sim/collapse_reading.py`; every source seen "
             "before. Runs whose smoothed reward fell at least 0.15 from its best, by source "
             "and label (min-max):", "",
             "| source | label | runs | fall | best at (share of run) | rise to the best "
             "| entropy late / start | KL late / start | reward late below start "
             "| candidate flags |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted({(r["source"], r["label"]) for r in fell}):
        group = [r for r in fell if (r["source"], r["label"]) == key]
        lines.append(f"| {key[0]} | {key[1]} | {len(group)} | "
                     + " | ".join(span([r[k] for r in group]) for k in
                                  ("fall", "best_at", "rise", "entropy", "kl",
                                   "below_start"))
                     + f" | {sum(r['candidate_flags'] for r in group)} |")
    lines += ["", "Calls that the candidate changes (label: current call -> candidate call, "
              "runs), and the runs each source names right before and after:", "",
              "| source | runs | right now | right with the candidate | changes |",
              "|---|---|---|---|---|"]
    for source in dict.fromkeys(r["source"] for r in rows):
        group = [r for r in rows if r["source"] == source]
        moved = Counter(f"{r['label']}: {r['current']} -> {r['candidate']}"
                        for r in group if r["current"] != r["candidate"])
        lines.append(f"| {source} | {len(group)} | "
                     f"{sum(r['current'] == r['label'] for r in group)} | "
                     f"{sum(r['candidate'] == r['label'] for r in group)} | "
                     + ("; ".join(f"{k} ({n})" for k, n in sorted(moved.items())) or "none")
                     + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Read every source, print the report and write it to ``results/collapse_reading.md``."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = third_sim(range(100, 130), Path(tmp))
        rows += categorical([*range(200, 212), *range(300, 306)], Path(tmp))
    rows += test_beds()
    text = render(rows)
    write_atomic(HERE / "results" / "collapse_reading.md", text)
    print(text)


if __name__ == "__main__":
    main()
