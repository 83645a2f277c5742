"""What coverage an exactly calibrated forecast gets in the benchmark's two strata.

The forecast benchmark (``benchmarks/forecast_baselines.py``) sorts each forecast into
"still moving" or "quiet" by what the run did after the cut: the held-out mean against the mean
of the last 20% of the training part, at 2 noise sigmas. The issue asks for a 90% band with
pooled coverage 0.85-0.95 in each stratum. A stratum chosen by the outcome selects the
forecasts whose future strayed (moving) or stayed (quiet), so even the exact predictive
distribution, which covers 90% of all points by construction, need not cover 90% within each.

This script measures it where the exact predictive distribution is known: runs of the noise
model of docs/theory.md section 6 about a known saturating mean, r(t) = m(t) + x_t + w_t, with
x an AR(1) of per-step autocorrelation rho and innovation sd q, and w white of sd s. Given the
training part, the future is Gaussian with mean m(t) + rho^h E[x_n | data] and variance
rho^(2h) P_n + v (1 - rho^(2h)) + s^2 (v = q^2 / (1 - rho^2), E and P_n from the Kalman filter
with the true parameters). Its 90% band is scored exactly as the benchmark scores a
forecaster: cuts at 30% and 50% of a 200-step run, sigma from ``estimate_noise`` of the whole
run, the stratum by the benchmark's own function.

    python studies/forecast/stratum_selection.py [--runs 400]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.append(str(Path(__file__).resolve().parents[2] / "benchmarks"))

from forecast_baselines import stratum  # noqa: E402

from grpodyn.numerics.fit import estimate_noise  # noqa: E402
from grpodyn.numerics.forecast_noise import ResidualNoise  # noqa: E402

STEPS = 200
CUTS = (0.3, 0.5)
Z = float(norm.ppf(0.95))
#: (name, tau of the mean's relaxation in steps, rho, q, s): the forecast test bed's noise
#: (tests/test_forecast.py: rho 0.9, q 0.01, s 0.03), a run at its plateau with correlated
#: noise, one whose noise wanders slowly, and white noise alone.
SETTINGS = (("test bed (tau 60, rho 0.9)", 60.0, 0.9, 0.01, 0.03),
            ("at its plateau (tau 5, rho 0.95)", 5.0, 0.95, 0.01, 0.03),
            ("a slow wander at its plateau (tau 5, rho 0.99)", 5.0, 0.99, 0.005, 0.03),
            ("white noise only (tau 60)", 60.0, 0.0, 0.0, 0.03))


def simulate(rng: np.random.Generator, tau: float, rho: float, q: float, s: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """Return (mean curve, run): 0.8 - 0.6 exp(-t / tau) plus the AR(1) and the white noise."""
    t = np.arange(STEPS, dtype=float)
    x = np.zeros(STEPS)
    v = q**2 / (1 - rho**2) if rho < 1 else 0.0
    x[0] = np.sqrt(v) * rng.standard_normal()
    for i in range(1, STEPS):
        x[i] = rho * x[i - 1] + q * rng.standard_normal()
    mean = 0.8 - 0.6 * np.exp(-t / tau)
    return mean, mean + x + s * rng.standard_normal(STEPS)


def oracle_band(mean: np.ndarray, run: np.ndarray, n: int, rho: float, q: float, s: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Return the exact 90% band of the points after the first ``n``, given them.

    The Kalman filter with the true parameters gives the deviation at the cut; the forecast's
    own noise model (:class:`grpodyn.numerics.forecast_noise.ResidualNoise`) carries it on.
    """
    v = q**2 / (1 - rho**2)
    m, p = 0.0, v
    for i in range(n):
        if i:
            m, p = rho * m, rho**2 * p + q**2
        gain = p / (p + s**2) if p + s**2 > 0 else 0.0
        m, p = m + gain * (run[i] - mean[i] - m), (1 - gain) * p
    noise = ResidualNoise(rho=rho, process_var=v, white_var=s**2, state_mean=m, state_var=p)
    deviation, var = noise.predict(np.arange(1, STEPS - n + 1))
    centre, sd = mean[n:] + deviation, np.sqrt(var)
    return centre - Z * sd, centre + Z * sd


def coverage_by_stratum(runs: int, tau: float, rho: float, q: float, s: float, seed: int = 0
                        ) -> dict[str, tuple[int, float]]:
    """Return the forecasts and the exact band's pooled coverage per stratum and in all."""
    rng = np.random.default_rng(seed)
    inside: dict[str, list[int]] = {"moving": [0, 0, 0], "quiet": [0, 0, 0], "all": [0, 0, 0]}
    for _ in range(runs):
        mean, run = simulate(rng, tau, rho, q, s)
        sigma = estimate_noise(run).sigma
        for cut in CUTS:
            n = int(np.floor(cut * STEPS))
            lower, upper = oracle_band(mean, run, n, rho, q, s)
            held = run[n:]
            hits = int(np.sum((held >= lower) & (held <= upper)))
            for key in (stratum(run[:n], held, sigma), "all"):
                inside[key][0] += 1
                inside[key][1] += hits
                inside[key][2] += held.size
    return {k: (c[0], c[1] / c[2] if c[2] else float("nan")) for k, c in inside.items()}


def main() -> int:
    """Print the table: each setting's forecasts and coverage, in all and per stratum."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400, help="runs per setting (default 400)")
    args = parser.parse_args()
    print("| setting | all: forecasts, coverage | moving | quiet |\n|---|---|---|---|")
    for name, tau, rho, q, s in SETTINGS:
        out = coverage_by_stratum(args.runs, tau, rho, q, s)
        cells = " | ".join(f"{out[k][0]}, {out[k][1]:.3f}" for k in ("all", "moving", "quiet"))
        print(f"| {name} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
