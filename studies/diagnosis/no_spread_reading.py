"""Measure whether a log with the entropy but no zero-std share tells concentration apart.

The diagnosis abstains on policy concentration where a log carries the entropy but neither the
zero-std share nor the reward's standard deviation (the ``no_spread`` key set of the
categorical simulator; verl's default metrics). This script measures, on every seen
``no_spread`` run of the simulator (seeds 200-1011 with seed % 4 == 1) and on every public log
where the diagnosis abstains, what such a log still shows:

- the entropy's lowest window as a share of its first steps' (``entropy ratio``);
- the share of the room below the ceiling that the reward closed, (r_late - r0) / (1 - r0);
- the slope of the reward over the run's second half, in standard errors (``late t``).

A reading that separates the simulator's concentrated runs from the public runs whose sources
document no failure would be a candidate rule; overlapping ranges mean the log does not
determine the label. Run ``python studies/diagnosis/no_spread_reading.py [--public DIR]``
(about 5 minutes); it writes ``studies/diagnosis/results/no_spread_reading.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT))  # studies/ is a folder of the repository, not of the package

from grpodyn.empirical.diagnostics.diagnose import diagnose  # noqa: E402
from grpodyn.empirical.diagnostics.modes import entropy_fall  # noqa: E402
from grpodyn.empirical.diagnostics.series import (  # noqa: E402
    is_success_rate,
    segments,
    window_mean,
)
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_run  # noqa: E402
from grpodyn.ground import InputError, write_atomic  # noqa: E402
from studies.diagnosis.categorical_sim import (  # noqa: E402
    FAMILIES,
    label_of,
    settings,
    simulate,
    write_run,
)

#: every seed range of the simulator scored or designed on before this study
SEEN = ((200, 212), (300, 306), (400, 412), (500, 512), (600, 612), (700, 712), (800, 812),
        (900, 912), (1000, 1012))
PUBLIC = ROOT.parent / "shared" / "data" / "real_logs"


def reading(run: Run) -> tuple[float, float, float]:
    """Return (entropy ratio, share of the room closed, late t) of one run (module docstring)."""
    early, late, _ = segments(run.n_points)
    fall = entropy_fall(run.metrics["entropy"], early, late)  # the diagnosis's own reading
    r0, r_late = window_mean(run.reward, early), window_mean(run.reward, late)
    half = np.arange(run.n_points) >= run.n_points // 2
    ok = half & np.isfinite(run.reward)
    x, y = run.steps[ok] - run.steps[ok].mean(), run.reward[ok]
    slope = float(x @ y / (x @ x))
    resid = y - y.mean() - slope * x
    se = float(np.sqrt(resid @ resid / (ok.sum() - 2) / (x @ x)))
    t = slope / se if se > 0 else float("nan")  # a reward pinned over the half: no slope
    ratio = fall.ratio if fall is not None else float("nan")  # no positive start: no ratio
    return ratio, (r_late - r0) / (1 - r0), t


def simulated(folder: Path) -> list[tuple[str, str, bool, tuple[float, float, float]]]:
    """(name, label, abstained, reading) of every seen ``no_spread`` run in [0, 1]."""
    rows = []
    seeds = [s for first, stop in SEEN for s in range(first, stop) if s % 4 == 1]
    for seed in seeds:
        for family in FAMILIES:
            config = settings(family, seed)
            log, truth = simulate(config, seed=10_000 * FAMILIES.index(family) + seed)
            label = label_of(family, truth)
            path = write_run(folder / f"{family}_{seed}", log, config=config, keys="no_spread",
                             with_g=bool(seed % 2), label=label, seed=seed)
            run = load_run(path)
            if not is_success_rate(run):
                continue
            verdict = diagnose(run).modes["policy_concentration"]
            rows.append((f"{family}_{seed}", label, verdict.undecided, reading(run)))
    return rows


def public(folder: Path) -> list[tuple[str, str, bool, tuple[float, float, float]]]:
    """(name, state, abstained, reading) of every public log where concentration abstains."""
    rows = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        try:
            run = load_run(path)
        except (LogFormatError, InputError):
            continue
        entropy = run.metrics.get("entropy")
        if entropy is None or np.isfinite(entropy).sum() < 4 or not is_success_rate(run):
            continue
        diagnosis = diagnose(run)
        if diagnosis.modes["policy_concentration"].undecided:
            rows.append((path.name[:60], diagnosis.state, True, reading(run)))
    return rows


def span(values: list[float]) -> str:
    """Return 'min-max (n)' of a list of numbers."""
    return f"{np.nanmin(values):.2f}-{np.nanmax(values):.2f} ({len(values)})" if values else "-"


def main() -> None:
    """Read every seen simulated run and every public abstention; write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public", type=Path, default=PUBLIC, help="folder of public logs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulated(Path(tmp))
    pub = public(args.public)
    groups = {"simulated concentration, abstained": [r for r in sim if r[1] ==
                                                    "policy_concentration" and r[2]],
              "simulated concentration, judged": [r for r in sim if r[1] ==
                                                 "policy_concentration" and not r[2]],
              "public logs, abstained (no failure documented)": pub}
    lines = ["# Concentration without the zero-std share: what the log still shows", "",
             "`python studies/diagnosis/no_spread_reading.py` (seen seeds only; min-max (runs))",
             "", "| group | entropy ratio | room closed | late t |", "|---|---|---|---|"]
    for name, rows in groups.items():
        cols = [span([r[3][i] for r in rows]) for i in range(3)]
        lines.append(f"| {name} | " + " | ".join(cols) + " |")
    lines += ["", "| run | label or state | abstained | entropy ratio | room closed | late t |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {n} | {lab} | {'yes' if u else 'no'} | {e:.3f} | {c:.2f} | {t:+.1f} |"
              for n, lab, u, (e, c, t) in sim + pub
              if lab == "policy_concentration" or u]
    out = ROOT / "studies" / "diagnosis" / "results" / "no_spread_reading.md"
    write_atomic(out, "\n".join(lines) + "\n")
    print("\n".join(lines[:10]))


if __name__ == "__main__":
    main()
