"""Check the forecast targets on one or more matrices of ``benchmarks/forecast.py``.

    python benchmarks/forecast.py --only categorical --seeds 4080-4279 --json M.json
    python studies/forecast/targets_check.py M.json [MORE.json ...]

The forecasts of every file are pooled (per-run rows, keyed by run and cut). For each grpodyn
forecaster in them, the six targets: median MAE / noise floor in the moving stratum at most the
best baseline's; in the quiet stratum at most 1.05x the best baseline's; overall at most 0.9x
the better of last value and recent mean; pooled 90% coverage within 0.85-0.95 in each stratum;
per-run coverage >= 0.6 on at least 85% of forecasts, from the benchmark's own summary of the
pooled rows (``benchmarks/forecast_baselines.summarise``). A baseline that failed on a forecast
is left out of its median there.

``--bootstrap N`` (default 2000; 0 leaves it out) asks whether the data determine each verdict:
the runs are drawn again with replacement (both cuts of a run together, the limits
recomputed in every draw, the best baseline chosen again), and each target gets the 90%
interval of its figure over its limit (for coverage, of the coverage itself). A target is
"met" or "missed" when the whole interval lies on one side of the limit, and "undetermined"
when the interval holds it: a fresh set of the same size could read either way. A stratum
with fewer than ten forecasts is undetermined without a draw. A verdict on the overall target
(set by no forecaster) that is not met is marked where the constant at the future median
(unreachable: it knows the rest of the run's level) misses it as well: knowing the level is
not enough there, though a forecaster that follows a trend can still do better on moving runs.

``--by-family`` adds where the moving stratum's coverage is lost: the pooled coverage of each
forecaster's 90% band over the moving forecasts of each run family (the run's name without its
seed, e.g. ``categorical_reward_hacking``) and cut.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[2] / "benchmarks"))

from forecast_baselines import summarise  # noqa: E402

BASELINES = ("last_value", "mean_last20", "linear", "damped_ets", "theta", "scalerl_sigmoid")
FORECASTERS = ("ensemble", "adaptive", "calibrated_prior", "learned_prior")


def pooled_rows(paths: list[Path]) -> dict[str, dict]:
    """Return the per-run rows of every matrix in ``paths``, pooled."""
    rows: dict[str, dict] = {}
    for path in paths:
        for source in json.loads(path.read_text()).values():
            rows.update(source["per_run"])
    return rows


def targets(table: dict[str, dict[str, dict]], method: str
            ) -> list[tuple[str, float, float, bool]]:
    """Return each target as (what, the forecaster's figure, the limit, met).

    ``table``: the benchmark's summary of the pooled rows (``forecast_baselines.summarise``).
    A stratum without forecasts gives NaN figures and limits (no verdict).
    """
    def mae(name: str | None, stratum: str) -> float:
        entry = table[stratum].get(name)
        return math.nan if entry is None else entry["median_mae_floor"]

    best = {s: min((b for b in BASELINES if b in table[s]), key=lambda b: mae(b, s),
                   default=None) for s in ("moving", "quiet")}
    naive = min(mae("last_value", "all"), mae("mean_last20", "all"))
    moving, quiet, overall = (mae(method, s) for s in ("moving", "quiet", "all"))
    share = table["all"][method]["share_runs_cov_ge_0.6"]
    limit_moving = mae(best["moving"], "moving")
    limit_quiet = 1.05 * mae(best["quiet"], "quiet")
    named = {s: best[s] or "the best baseline" for s in best}
    out = [(f"moving MAE <= {named['moving']}", moving, limit_moving, moving <= limit_moving),
           (f"quiet MAE <= 1.05 x {named['quiet']}", quiet, limit_quiet, quiet <= limit_quiet),
           ("all MAE <= 0.9 x naive", overall, 0.9 * naive, overall <= 0.9 * naive)]
    for stratum in ("moving", "quiet"):
        c = table[stratum].get(method, {}).get("pooled_coverage", math.nan)
        out.append((f"{stratum} coverage in 0.85-0.95", c, 0.95 if c > 0.95 else 0.85,
                    0.85 <= c <= 0.95))
    out.append(("per-run coverage >= 0.6 on >= 85%", share, 0.85, share >= 0.85))
    return out


#: A stratum with fewer forecasts than this has no verdict that the data determine.
FEWEST_FORECASTS = 10


def oracle_misses(table: dict[str, dict[str, dict]]) -> list[bool]:
    """Return, per MAE target, whether the constant at the future median misses it too.

    The moving and quiet targets are set by a baseline's own error, which that baseline
    reaches. The overall target, 0.9 x the better of last value and recent mean, is set by no
    forecaster; where the constant at the future median (``oracle_median``, which knows the
    mean level of the rest of the run) misses it too, it asks more than knowing the level
    gives (a forecaster that follows a trend can still beat the constant on moving runs).
    """
    if any("oracle_median" not in table[s] for s in ("moving", "quiet")):
        return [False, False, False]
    return [False, False, not targets(table, "oracle_median")[2][3]]


def run_of(key: str) -> str:
    """Return the run of a row key ``NAME_sSEED@F`` (both cuts of a run share it)."""
    return key.rpartition("@")[0]


def verdicts(rows: dict[str, dict], method: str, draws: int, seed: int = 0
             ) -> list[tuple[float, float, str]]:
    """Return each target's 90% interval and status under a bootstrap over runs.

    Parameters
    ----------
    rows : dict
        Per-forecast rows, pooled (:func:`pooled_rows`).
    method : str
        The grpodyn forecaster.
    draws : int
        Bootstrap draws (runs drawn with replacement, both cuts of a run together).
    seed : int
        Seed of the draws.

    Returns
    -------
    list of (low, high, status)
        In the order of :func:`targets`: the 5% and 95% quantiles of the figure over its
        limit (MAE targets) or of the figure (coverage targets), and "met", "missed" or
        "undetermined" (the interval holds the limit, or the stratum has fewer than
        :data:`FEWEST_FORECASTS` forecasts).
    """
    by_run: dict[str, list[dict]] = defaultdict(list)
    for key, row in rows.items():
        by_run[run_of(key)].append(row)
    runs = list(by_run)
    counts = {s: sum(r["stratum"] == s for r in rows.values()) for s in ("moving", "quiet")}
    thin = [counts["moving"] < FEWEST_FORECASTS, counts["quiet"] < FEWEST_FORECASTS,
            False, counts["moving"] < FEWEST_FORECASTS, counts["quiet"] < FEWEST_FORECASTS,
            False]
    rng = np.random.default_rng(seed)
    samples: list[list[float]] = [[] for _ in range(6)]
    for _ in range(draws):
        drawn = [row for i in rng.integers(len(runs), size=len(runs)) for row in by_run[runs[i]]]
        for i, (_what, figure, limit, _met) in enumerate(targets(summarise(drawn), method)):
            if math.isnan(figure) or (i < 3 and math.isnan(limit)):
                continue  # a stratum the draw left empty has no figure
            if i >= 3:
                samples[i].append(figure)
            elif limit:
                samples[i].append(figure / limit)
            else:  # a limit of zero is met only by a figure of zero
                samples[i].append(0.0 if figure == 0 else math.inf)
    out = []
    for i, values in enumerate(samples):
        if thin[i] or len(values) < draws // 2:
            out.append((float("nan"), float("nan"), "undetermined"))
            continue
        # a ratio over a zero limit is infinite; the largest double stands for it, since the
        # quantiles' interpolation would take inf - inf
        finite = np.minimum(values, np.finfo(float).max)
        low, high = (float(q) for q in np.quantile(finite, [0.05, 0.95]))
        if i < 3:
            status = "met" if high <= 1 else "missed" if low > 1 else "undetermined"
        elif i < 5:
            status = ("met" if 0.85 <= low and high <= 0.95 else
                      "missed" if high < 0.85 or low > 0.95 else "undetermined")
        else:
            status = "met" if low >= 0.85 else "missed" if high < 0.85 else "undetermined"
        out.append((low, high, status))
    return out


def moving_coverage_by_family(rows: dict[str, dict]) -> dict[tuple[str, str], dict[str, float]]:
    """Return the pooled moving-stratum coverage per (family, cut) and forecaster, with counts.

    A row's key is ``NAME_sSEED@F``; the family is ``NAME``. Each cell also holds ``forecasts``.
    """
    inside: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0]))
    count: dict[tuple[str, str], int] = defaultdict(int)
    for key, row in rows.items():
        if row["stratum"] != "moving":
            continue
        name, _, cut = key.rpartition("@")
        cell = (re.sub(r"_s\d+$", "", name), cut)
        count[cell] += 1
        for method in FORECASTERS:
            if method in row:
                inside[cell][method][0] += row[method]["inside"]
                inside[cell][method][1] += row[method]["n"]
    return {cell: {"forecasts": count[cell],
                   **{m: k / n for m, (k, n) in inside[cell].items() if n}}
            for cell in sorted(count)}


def main() -> int:
    """Print each forecaster's six targets on the pooled matrices."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrices", nargs="+", type=Path, help="JSON of benchmarks/forecast.py")
    parser.add_argument("--bootstrap", type=int, default=2000, metavar="N",
                        help="bootstrap draws over runs for each verdict's interval (0: none)")
    parser.add_argument("--by-family", action="store_true",
                        help="add the moving stratum's coverage per run family and cut")
    args = parser.parse_args()
    rows = pooled_rows(args.matrices)
    table = summarise(list(rows.values()))
    if args.bootstrap < 0:
        parser.error("--bootstrap must be 0 or more")
    print(f"{len(rows)} forecasts ({sum(r['stratum'] == 'moving' for r in rows.values())} "
          f"moving, {len({run_of(k) for k in rows})} runs)\n\n"
          "| forecaster | target | figure | limit | met | 90% interval (figure / limit for "
          "MAE) | status |\n|---|---|---|---|---|---|---|")
    for method in FORECASTERS:
        if method in table["all"]:
            checks = targets(table, method)
            spans = (verdicts(rows, method, args.bootstrap) if args.bootstrap
                     else [(float("nan"), float("nan"), "-")] * len(checks))
            reach = oracle_misses(table) + [False] * 3
            for (what, figure, limit, met), (low, high, status), beyond in zip(
                    checks, spans, reach, strict=True):
                status += " (the constant at the future median misses it too)" \
                    if beyond and status != "met" else ""
                span = "-" if np.isnan(low) else f"{low:.3f}-{high:.3f}"
                if np.isnan(figure):  # a stratum without forecasts: nothing to judge
                    status = "no forecasts" if args.bootstrap else "-"
                    print(f"| {method} | {what} | - | - | - | - | {status} |")
                    continue
                print(f"| {method} | {what} | {figure:.3f} | {limit:.3f} | "
                      f"{'yes' if met else 'no'} | {span} | {status} |")
            judged = [(c, v) for c, v in zip(checks, spans, strict=True) if not np.isnan(c[1])]
            tally = (f" ({sum(v[2] == 'met' for _, v in judged)} met, "
                     f"{sum(v[2] == 'missed' for _, v in judged)} missed, "
                     f"{sum(v[2] == 'undetermined' for _, v in judged)} undetermined)"
                     if args.bootstrap else "")
            empty = len(checks) - len(judged)
            unjudged = f"; {empty} with no forecasts" if empty else ""
            print(f"| {method} | **targets met** | {sum(c[3] for c, _ in judged)} of "
                  f"{len(judged)}{tally}{unjudged} | | | | |")
    if args.by_family:
        cells = moving_coverage_by_family(rows)
        methods = [m for m in FORECASTERS if any(m in c for c in cells.values())]
        print("\nmoving stratum: pooled 90% coverage by run family and cut\n\n"
              f"| family | cut | forecasts | {' | '.join(methods)} |\n"
              f"|---|---|---|{'---|' * len(methods)}")
        for (family, cut), cell in cells.items():
            print(f"| {family} | {cut} | {cell['forecasts']} | "
                  + " | ".join(f"{cell[m]:.3f}" if m in cell else "-" for m in methods) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
