"""On-disk cache of the derivation registry.

Key: a hash of the theory layer's source files, the symbol table and the sympy version. Value: a
JSON file with the ``srepr`` of every expression. Reading it back never evaluates text: a small
parser walks the ``srepr`` syntax tree and builds only sympy classes with literal arguments, so a
tampered cache file can at worst fail to load (then the registry is derived afresh).

Location: ``$GRPODYN_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/grpodyn`` or ``~/.cache/grpodyn``;
never the installed package.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.core.function import UndefinedFunction
from sympy.functions.elementary.piecewise import ExprCondPair

from .sourcehash import theory_source_hash
from .symbols import TABLE

__all__ = ["cache_dir", "source_key", "load_entries", "store_entries", "parse_srepr",
           "canonical"]

_CONSTANTS = {
    "pi": sp.pi, "E": sp.E, "I": sp.I, "oo": sp.oo, "zoo": sp.zoo, "nan": sp.nan,
    "true": sp.true, "false": sp.false, "EulerGamma": sp.EulerGamma,
}
#: sympy classes that srepr names but the sympy namespace does not export (a Piecewise's pairs,
#: the functions of a derivation's numeric form)
_CLASSES = {"ExprCondPair": ExprCondPair, "expm1": expm1, "log1p": log1p}


def cache_dir() -> Path:
    """Directory of the derivation cache (created on first store)."""
    env = os.environ.get("GRPODYN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "grpodyn"


def source_key() -> str:
    """Hash of the theory sources, the symbol table and the sympy version."""
    digest = hashlib.sha256(theory_source_hash().encode())
    digest.update(repr(sorted((k, repr(v)) for k, v in TABLE.items())).encode())
    digest.update(sp.__version__.encode())
    return digest.hexdigest()[:32]


def _cache_file(key: str) -> Path:
    return cache_dir() / f"registry-{key}.json"


def parse_srepr(text: str) -> sp.Basic:
    """Rebuild a sympy object from its ``srepr`` without evaluating code.

    Only calls of sympy classes (or ``Symbol``-like constructors) with literal or nested-call
    arguments are accepted; anything else raises ``ValueError``.
    """
    return _build(ast.parse(text, mode="eval").body)


def canonical(expr: sp.Basic) -> sp.Basic:
    """``expr`` as rebuilt from its srepr: a fixed point of the cache round trip.

    Rebuilding re-evaluates (``(K - 1)/2`` becomes ``K/2 - 1/2``); storing the rebuilt form makes
    a warm registry identical, node for node, to a cold one.
    """
    return parse_srepr(sp.srepr(expr))


def _build(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _build(node.operand)
        if isinstance(value, (int, float)):
            return -value
    if isinstance(node, ast.List | ast.Tuple):
        return [_build(e) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        cls = _CLASSES.get(node.func.id) or getattr(sp, node.func.id, None)
        if not (isinstance(cls, type) and issubclass(cls, sp.Basic)):
            raise ValueError(f"srepr: {node.func.id!r} is not a sympy class")
        args = [_build(a) for a in node.args]
        kwargs = {kw.arg: _build(kw.value) for kw in node.keywords}
        if any(k is None for k in kwargs):
            raise ValueError("srepr: ** arguments are not allowed")
        if issubclass(cls, sp.core.relational.Relational | sp.floor):  # a domain may restate
            kwargs["evaluate"] = False  # an assumption (derivation.whole_number)
        return cls(*args, **kwargs)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):  # Function('e')(t)
        function = _build(node.func)
        if isinstance(function, UndefinedFunction) and not node.keywords:
            return function(*[_build(a) for a in node.args])
    raise ValueError(f"srepr: unexpected syntax {ast.dump(node)[:80]}")


def load_entries(key: str) -> dict[str, dict[str, Any]] | None:
    """Return cached entries for ``key``, or None when absent or unreadable."""
    path = _cache_file(key)
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    return data.get("entries")


def store_entries(key: str, entries: dict[str, dict[str, Any]]) -> Path | None:
    """Write the cache atomically; returns the path, or None if the directory is not writable."""
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".registry-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "sympy": sp.__version__, "entries": entries}, fh)
        os.replace(tmp, path)
    except OSError:
        return None
    return path
