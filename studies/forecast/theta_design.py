"""The design look at the Theta method's point as a third member of the ensemble's average.

The section "Real runs still climbing at the cut" of this folder's README.
``python studies/forecast/theta_design.py [--logs DIR]`` forecasts every design source cut at
F = 0.3 and 0.5 with the stacked curve models (``forecast_curve``), the calibrated learned
prior (``calibrated_prior_forecast``) and the Theta method (statsmodels' ``ThetaModel``, the
benchmark's baseline), and prints, per source and stratum, the median MAE over the noise floor
and the median signed error (held-out mean minus point, noise-floor units) of three points:
the ensemble's (the curve models' and the prior's average), the average of all three, and the
three-way average only where the run is not quiet at the cut (``regime``), the two-way one
elsewhere. Sources: the public logs (``--logs``, default ``../shared/data/real_logs``), every
other run of the tiny-model grid2 and grid2_high at seeds 0-20, the tiny-model climb runs at
seeds 49-56, categorical seeds 0-39 and bandit seeds 0-3. Needs the ``baselines`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from combination_design import (  # noqa: E402
    design_sources,
    print_source,
    tiny_climb_design,
    two_forecasts,
)
from forecast_baselines import theta  # noqa: E402  (a benchmark script)

from grpodyn.empirical.logs.loaders import Run  # noqa: E402


def _one(job: tuple[str, Run, float]) -> dict | None:
    """Score the three points of one run cut at one fraction (None: too short a cut)."""
    cut = two_forecasts(job[1], job[2])
    if cut is None:
        return None
    theta_point = theta(cut.t_train, cut.y_train, cut.t_held)[0]
    pair = 0.5 * (cut.curves.point + cut.prior.point)
    three = (cut.curves.point + cut.prior.point + theta_point) / 3
    points = {"ensemble": pair, "three": three,
              "three_moving": pair if cut.quiet_at_cut else three}
    return {"stratum": cut.stratum, "quiet_at_cut": cut.quiet_at_cut,
            **{name: cut.errors(point) for name, point in points.items()}}


def main() -> None:
    """Print the design table."""
    sources = design_sources(__doc__.splitlines()[0],
                             {"tiny climb (seeds 49-56)": tiny_climb_design})
    keys = ("ensemble", "three", "three_moving")
    print("| source | stratum | forecasts | ensemble | three-way | three-way where not quiet | "
          "signed error (same order) |")
    print("|---|---|---|---|---|---|---|")
    for label, load in sources.items():
        print_source(label, load, _one, keys)


if __name__ == "__main__":
    main()
