"""Building the registry of every derivation, lazily, with the on-disk cache.

A derivation is registered by decorating a function ``derive_<name>()`` that returns a
:class:`~grpodyn.theory.derivation.Derivation` named ``<name>``. Builders may call :func:`get` to
use earlier results; the registry resolves them on demand and detects cycles.
"""

from __future__ import annotations

import difflib
import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import cache
from .derivation import Derivation, DerivationError, Step
from .symbols import declared

__all__ = ["derivation", "get", "registry", "names", "BuildInfo", "build_info", "clear"]

_BUILDERS: dict[str, Callable[[], Derivation]] = {}
_BUILT: dict[str, Derivation] = {}
_IN_PROGRESS: list[str] = []


@dataclass(frozen=True)
class BuildInfo:
    """How the registry was last obtained: derived afresh or read from the disk cache."""

    source: str  # "derived" or "cache"
    seconds: float
    key: str


_LAST_BUILD: BuildInfo | None = None


def derivation(fn: Callable[[], Derivation]) -> Callable[[], Derivation]:
    """Register ``derive_<name>`` as the builder of the derivation ``<name>``."""
    if not fn.__name__.startswith("derive_"):
        raise DerivationError(f"builder {fn.__name__} must be named derive_<name>")
    name = fn.__name__.removeprefix("derive_")
    if name in _BUILDERS:
        raise DerivationError(f"derivation {name!r} is registered twice")
    _BUILDERS[name] = fn
    return fn


def _ensure_registered() -> None:
    """Import every derivation module (importing registers its builders)."""
    from . import DERIVATION_MODULES

    for module in DERIVATION_MODULES:
        importlib.import_module(f"{__package__}.{module}")


def _ordered() -> list[str]:
    """Return the registered names in the canonical order.

    By module (the order of ``DERIVATION_MODULES``), then as registered within a module, so
    that the order does not depend on which module a caller happened to import first.
    """
    from . import DERIVATION_MODULES

    rank = {f"{__package__}.{module}": i for i, module in enumerate(DERIVATION_MODULES)}
    return sorted(_BUILDERS, key=lambda name: rank.get(_BUILDERS[name].__module__, len(rank)))


def names() -> tuple[str, ...]:
    """Names of all registered derivations, in the canonical order (see :func:`_ordered`)."""
    _ensure_registered()
    return tuple(_ordered())


def get(name: str) -> Derivation:
    """Return the derivation ``name``, deriving it (and what it needs) if necessary."""
    if name in _BUILT:
        return _BUILT[name]
    _ensure_registered()
    if name not in _BUILDERS:
        close = difflib.get_close_matches(str(name), _BUILDERS, n=5) if isinstance(name, str) \
            else []
        raise KeyError(f"no derivation named {name!r}"
                       + (f"; close: {', '.join(close)}" if close else "")
                       + f"; grpodyn.theory.names() lists all {len(_BUILDERS)}")
    if name in _IN_PROGRESS:
        raise DerivationError(f"cyclic derivation: {' -> '.join([*_IN_PROGRESS, name])}")
    _IN_PROGRESS.append(name)
    try:
        result = _BUILDERS[name]()
    finally:
        _IN_PROGRESS.pop()
    if result.name != name:
        raise DerivationError(f"derive_{name} returned a derivation named {result.name!r}")
    _BUILT[name] = result
    return result


def _to_entry(d: Derivation) -> dict:
    from sympy import srepr

    return {
        "expr": srepr(d.expr),
        "args": list(d.arg_names),
        "summary": d.summary,
        "section": d.section,
        "steps": [[s.description, srepr(s.expr)] for s in d.steps],
        "domain": None if d.domain is None else srepr(d.domain),
        "numeric_form": None if d.numeric_form is None else srepr(d.numeric_form),
    }


def _from_entry(name: str, entry: Mapping) -> Derivation:
    return Derivation(
        name=name,
        expr=cache.parse_srepr(entry["expr"]),
        args=tuple(declared(a) for a in entry["args"]),
        summary=entry["summary"],
        section=entry["section"],
        steps=tuple(Step(desc, cache.parse_srepr(text)) for desc, text in entry["steps"]),
        domain=None if entry.get("domain") is None else cache.parse_srepr(entry["domain"]),
        numeric_form=(None if entry.get("numeric_form") is None
                      else cache.parse_srepr(entry["numeric_form"])),
    )


def registry(*, use_cache: bool = True) -> Mapping[str, Derivation]:
    """Every registered derivation, by name.

    Parameters
    ----------
    use_cache
        Read (and write) the on-disk cache. With False everything is derived afresh.
    """
    global _LAST_BUILD
    _ensure_registered()
    if len(_BUILT) == len(_BUILDERS) and use_cache:
        return _in_registration_order()
    start = time.perf_counter()
    key = cache.source_key()
    entries = cache.load_entries(key) if use_cache else None
    if entries is not None and set(entries) == set(_BUILDERS):
        try:
            loaded = {name: _from_entry(name, entries[name]) for name in _BUILDERS}
        except (ValueError, KeyError, TypeError, DerivationError):
            loaded = None
        if loaded is not None:
            _BUILT.update(loaded)
            _LAST_BUILD = BuildInfo("cache", time.perf_counter() - start, key)
            return _in_registration_order()
    if not use_cache:
        _BUILT.clear()
    for name in _ordered():
        get(name)
    if use_cache:
        cache.store_entries(key, {name: _to_entry(d) for name, d in _BUILT.items()})
    _LAST_BUILD = BuildInfo("derived", time.perf_counter() - start, key)
    return _in_registration_order()


def _in_registration_order() -> dict[str, Derivation]:
    """Return the built derivations in the canonical order, whatever order built them."""
    return {name: _BUILT[name] for name in _ordered()}


def build_info() -> BuildInfo | None:
    """How the registry was last built (None before the first build)."""
    return _LAST_BUILD


def clear() -> None:
    """Forget every built derivation (the on-disk cache is kept)."""
    _BUILT.clear()
