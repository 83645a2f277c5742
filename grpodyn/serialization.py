"""Strict JSON for results: non-finite floats (inf: "no threshold") become null."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["finite_json"]


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None and numpy scalars (floats,
    integers, booleans) made plain."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value
