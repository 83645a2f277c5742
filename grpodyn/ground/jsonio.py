"""Strict JSON for results: non-finite floats (inf: "no threshold") become null."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

__all__ = ["dumps_json", "finite_json", "json_number"]


def json_number(value: float) -> float | None:
    """Return ``value`` as a plain float, or None when it is not finite.

    Parameters
    ----------
    value : float
        Any real number (a numpy scalar too).

    Returns
    -------
    float or None
        The number, or None for NaN and infinities (JSON has no token for them).
    """
    return float(value) if math.isfinite(value) else None


def finite_json(value: Any) -> Any:
    """Return ``value`` with every non-finite float replaced by None and numpy scalars made plain.

    Parameters
    ----------
    value : Any
        A nest of dicts, lists, tuples, floats, numpy floats, integers and booleans.

    Returns
    -------
    Any
        The same nest (tuples become lists) that :func:`json.dumps` writes with
        ``allow_nan=False``.
    """
    if isinstance(value, (float, np.floating)):
        return json_number(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def dumps_json(value: Any, *, indent: int | None = None) -> str:
    """Serialise ``value`` as strict JSON (no NaN or Infinity tokens).

    Parameters
    ----------
    value : Any
        What :func:`finite_json` accepts.
    indent : int, optional
        Indentation, as in :func:`json.dumps`; None writes one line.

    Returns
    -------
    str
        The JSON text.
    """
    return json.dumps(finite_json(value), indent=indent, allow_nan=False)
