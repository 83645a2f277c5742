"""The burn-in route: the drift read after a burn-in at the segment's own lr.

Findings 10f (post hoc): a copy state made at lr 0.1 carries lr 0.1's fluctuation level; the first
20 steps at another lr re-equilibrate to that lr (the burn-in's change equals the segment drift
without one in all four measured cases), and segments read after a 20-step burn-in at their own
lr rise at the runs' pace. Here each segment first runs ``BURN_IN`` steps at its lr from the copy
state (seeds of their own from ``BURNIN_SEGMENT_SEED``), then its 20-step change is read.
"""

from __future__ import annotations

__all__ = ["BURN_IN", "BURNIN_SEGMENT_SEED"]

BURN_IN = 20  # steps at the segment's lr before the segment: the fast time is <= 20 steps (10f)
BURNIN_SEGMENT_SEED = 50_000  # segments 51000-61104, burn-ins +500 (slow route: 31000-41604)
