"""Same optimum with fewer starts: ``python benchmarks/fit_optimum.py [--quick]``.

On 200 series (100 signal + noise, 50 of them reversed, 50 pure noise; 50-3000 points) each
fit runs twice: by default (a later start only where the projected cost dips between the optimum
and the start) and with ``every_start=True``; and ``scipy.optimize.curve_fit`` runs from every
one of the model's starting points (the best of them), as an outside reference. Printed per
kind of series: how many fits end on a higher RSS than the every-start fit (more than 1e-12
relative), the largest difference, and the time of both. Timings on a shared machine are noisy;
the RSS comparisons are not.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import curve_fit

from grpodyn.numerics.fit import closed_form, curve_model, fit_curve
from grpodyn.numerics.simulate import simulate_sde


def series_set(signals: int = 100) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Return the test set: (kind, t, y) with kind signal, reversed or noise."""
    out = []
    rng = np.random.default_rng(2026)
    for i in range(signals):
        n = int(rng.integers(50, 3001))
        stiffness = float(10 ** rng.uniform(-3.5, -1.5))
        e = simulate_sde(momentum=0.9, stiffness=stiffness, e0=-0.5, steps=n - 1, noise=1e-7,
                         seed=i)[0]
        y = 0.7 + e + 0.03 * np.random.default_rng(i + 1).standard_normal(n)
        out.append(("signal", np.arange(n), y))
        if i < signals // 2:
            out.append(("reversed", np.arange(n), y[::-1].copy()))
            noise = np.random.default_rng(10**5 + i).standard_normal(n)
            out.append(("noise", np.arange(n), noise))
    return out


def _exponential(t: np.ndarray, r0: float, r_star: float, tau: float) -> np.ndarray:
    return r_star + (r0 - r_star) * np.exp(-t / tau)


def _inertial(t: np.ndarray, r0: float, r_star: float, zeta: float, omega0: float) -> np.ndarray:
    return r_star + (r0 - r_star) * closed_form(t, 1.0, 0.0, zeta, omega0)


def _curve_fit_best(name: str, t: np.ndarray, y: np.ndarray) -> float:
    """Lowest SSE of curve_fit from each of the model's starting points (inf if none ends)."""
    model = curve_model(name, t.astype(float), y)
    law = _exponential if name == "exponential" else _inertial
    best = np.inf
    for start in model.starts:
        p0 = [y[0], y[-1], *start]
        bounds = ((-np.inf, -np.inf, *model.lower), (np.inf, np.inf, *model.upper))
        try:
            with np.errstate(all="ignore"):
                theta, _ = curve_fit(law, t.astype(float), y, p0=p0, bounds=bounds,
                                     method="trf")
                sse = float(np.sum((law(t.astype(float), *theta) - y) ** 2))
        except (RuntimeError, ValueError):
            continue
        if np.isfinite(sse):
            best = min(best, sse)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="40 signal series instead of 100")
    args = parser.parse_args()
    print("| model | series | fits | default above every start (> 1e-12 rel.) | largest "
          "| every start above curve_fit's best | default / every-start time |")
    print("|---|---|---|---|---|---|---|")
    for name, options in (("exponential", {}), ("inertial", {}),
                          ("inertial", {"momentum": 0.9})):
        label = name + (", momentum known" if options else "")
        rows: dict[str, dict] = {}
        for kind, t, y in series_set(40 if args.quick else 100):
            row = rows.setdefault(kind, {"n": 0, "above": 0, "worst": 0.0, "ref": 0,
                                         "time": [0.0, 0.0]})
            start = time.perf_counter()
            default = fit_curve(name, t, y, **options)
            middle = time.perf_counter()
            every = fit_curve(name, t, y, every_start=True, **options)
            row["time"][0] += middle - start
            row["time"][1] += time.perf_counter() - middle
            row["n"] += 1
            gap = (default.rss - every.rss) / every.rss
            if gap > 1e-12:
                row["above"] += 1
                row["worst"] = max(row["worst"], gap)
            if not options and every.rss > _curve_fit_best(name, t, y) * (1 + 1e-9):
                row["ref"] += 1
        for kind, row in rows.items():
            reference = "n/a" if options else str(row["ref"])
            print(f"| {label} | {kind} | {row['n']} | {row['above']} | {row['worst']:.1e} | "
                  f"{reference} | {row['time'][0]:.2f} s / {row['time'][1]:.2f} s |")


if __name__ == "__main__":
    main()
