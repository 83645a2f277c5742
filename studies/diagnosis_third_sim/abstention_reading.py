"""Measure what the reward's between-prompt share says where the concentration reading abstains.

Where a log has the entropy but no zero-std share and the entropy fell beyond what the reward's
move explains, the diagnosis abstains on policy concentration. On logs without the entropy it
reads the share of the reward's variance between prompts instead (module
``grpodyn.empirical.diagnostics.fluctuation``: more than half marks a policy that answers most
prompts deterministically). This script reads that share on every run where the diagnosis
abstains: this simulator's seeds 100-129 (with each run's label) and the public logs beside the
checkout (``--public``, default ``../shared/data/real_logs``; left out where missing).

Run ``python studies/diagnosis_third_sim/abstention_reading.py`` (about 2 minutes); it writes
``results/abstention_reading.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import sim  # noqa: E402

from grpodyn.empirical.diagnostics.diagnose import diagnose  # noqa: E402
from grpodyn.empirical.diagnostics.fluctuation import sampling_share  # noqa: E402
from grpodyn.empirical.diagnostics.series import segments, window_mean  # noqa: E402
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_run  # noqa: E402
from grpodyn.ground import InputError, write_atomic  # noqa: E402


def reading(run: Run) -> tuple[str, float, float] | None:
    """Return (the share's status, the share, the late reward) where the diagnosis abstains."""
    if not diagnose(run).modes["policy_concentration"].undecided:
        return None
    _, late, _ = segments(run.n_points)
    g = run.meta.group_size.value if run.meta.group_size else None
    share = sampling_share(run, late, g)
    return share.status, float(share.kappa), float(window_mean(run.reward, late))


def simulated(folder: Path) -> list[tuple[str, str, tuple[str, float, float]]]:
    """Read every abstaining run of seeds 100-129 with the entropy and no zero-std share."""
    rows = []
    for seed in range(100, 130):
        for name, family, _, keyset, _, log, args, state in sim.runs_of_seed(seed):
            if keyset != "no_zero_std":
                continue
            found = reading(load_run(sim.write_run(folder / name, log, args, keyset)))
            if found is not None:
                rows.append((f"{name} ({family})", sim.label_of(state)[0], found))
    return rows


def public(folder: Path) -> list[tuple[str, str, tuple[str, float, float]]]:
    """Read every public log where the diagnosis abstains on concentration."""
    rows = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("MANIFEST"):
            continue
        try:
            found = reading(load_run(path))
        except (LogFormatError, InputError, OSError, ValueError):
            continue
        if found is not None:
            rows.append((path.name[-60:], "public", found))
    return rows


def main() -> None:
    """Read both groups; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public", type=Path, default=ROOT.parent / "shared" / "data"
                        / "real_logs", help="folder of public logs")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        rows = simulated(Path(tmp))
    rows += public(args.public) if args.public.is_dir() else []
    lines = ["# Where the concentration reading abstains: the reward's between-prompt share", "",
             "`python studies/diagnosis_third_sim/abstention_reading.py`: every run where the "
             "diagnosis abstains on concentration, this simulator's seeds 100-129 (key set "
             "`no_zero_std`) and the public logs; the share flags above 0.5.", "",
             "| run | label | share status | share | late reward |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {label} | {status} | {share:.2f} | {late:.2f} |"
              for name, label, (status, share, late) in rows]
    text = "\n".join(lines) + "\n"
    write_atomic(HERE / "results" / "abstention_reading.md", text)
    print(text)


if __name__ == "__main__":
    main()
