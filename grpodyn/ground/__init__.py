"""The ground floor: errors, input checks, atomic writes and strict JSON.

Every layer (theory, numerics, empirical) and the top-level package may import it; it imports
nothing of grpodyn and no sympy, so it never points an arrow the wrong way (the layer test in
tests/test_packaging.py holds it to that).

- :mod:`grpodyn.ground.checks`: :class:`InputError`, :class:`TooFewPoints` and the ``check_*``
  functions;
- :mod:`grpodyn.ground.files`: :func:`write_atomic`, :func:`save_figure`;
- :mod:`grpodyn.ground.figures`: :func:`axes_or_new`;
- :mod:`grpodyn.ground.jsonio`: :func:`finite_json`, :func:`json_number`, :func:`dumps_json`.
"""

from __future__ import annotations

from grpodyn.ground.checks import (
    InputError,
    TooFewPoints,
    check_finite,
    check_flag,
    check_fraction,
    check_group_size,
    check_int,
    check_momentum,
    check_positive,
    check_reward_range,
    check_series,
    one_of_alias,
)
from grpodyn.ground.figures import axes_or_new
from grpodyn.ground.files import save_figure, write_atomic
from grpodyn.ground.jsonio import dumps_json, finite_json, json_number

__all__ = ["InputError", "axes_or_new", "check_finite", "check_flag", "check_fraction",
           "check_group_size", "check_int",
           "check_momentum", "check_positive", "check_reward_range", "check_series",
           "dumps_json", "finite_json", "json_number", "one_of_alias", "save_figure",
           "write_atomic", "TooFewPoints"]
