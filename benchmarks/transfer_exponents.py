"""The tau-lr exponents the design sweeps measure, and the prior spread taken from them.

``python benchmarks/transfer_exponents.py [--out FILE]``

Fits each optimizer's runs of the two tiny grids (seeds 0-2, the seeds the method was designed
on) and records the tau-lr exponent each measures (``SweepFit.tau_lr_exponent``, expected -1)
and Adam's B G exponent (``SweepFit.bg_test``). The root mean square of p + 1 over the four
sweeps is the spread a transfer gives the exponent when its sources hold a single learning
rate (``grpodyn.empirical.logs.sweep_exponents.TAU_LR_PRIOR_SD``). Writes
``studies/transfer/results/design_exponents.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.sweep import fit_sweep, load_sweep_run
from grpodyn.empirical.tinylm.make_grid import DESIGNS
from grpodyn.ground import write_atomic

OUT = Path(__file__).resolve().parents[1] / "studies" / "transfer" / "results" / \
    "design_exponents.json"


def main(argv: list[str] | None = None) -> int:
    """Fit the design sweeps; print and write their exponents."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    result: dict = {"seeds": args.seeds, "sweeps": {}}
    deviations = []
    for design in ("grid1", "grid2"):
        runs = [load_sweep_run(p) for p in sorted(DESIGNS[design].out.glob("*.json"))]
        for optimizer in ("sgd", "adam"):
            members = [r for r in runs if r.hparams["optimizer"] == optimizer
                       and r.hparams.get("seed") in args.seeds]
            fit = fit_sweep(members)
            tau = fit.tau_lr_exponent()[optimizer]
            bg = fit.bg_test().get(optimizer, {})
            result["sweeps"][f"{DESIGNS[design].out.name} {optimizer}"] = {
                "runs": len(members), "tau_lr_exponent": tau,
                "bg_exponent": bg.get("bg_exponent"),
                "predicted_bg_exponent": bg.get("predicted_bg_exponent")}
            deviations.append(tau["value"] + 1.0)
            print(f"{DESIGNS[design].out.name} {optimizer}: tau-lr exponent "
                  f"{tau['value']:.3f} +- {tau['stderr']:.3f}", flush=True)
    result["rms_deviation_from_minus_one"] = float(np.sqrt(np.mean(np.square(deviations))))
    print(f"rms of p + 1: {result['rms_deviation_from_minus_one']:.3f}")
    write_atomic(args.out, json.dumps(result, indent=1, default=float))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
