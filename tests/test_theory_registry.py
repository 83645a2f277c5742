"""The Derivation record, the registry and its on-disk cache."""

from __future__ import annotations

import pytest
import sympy as sp

from grpodyn.theory import Derivation, DerivationError, names, registry, sym
from grpodyn.theory import cache as theory_cache


def test_derivation_rejects_undeclared_free_symbols():
    stray = sp.Symbol("stray")
    with pytest.raises(DerivationError, match="stray"):
        Derivation("bad", sym.beta + stray, (sym.beta,), "bad", "test")


def test_derivation_rejects_symbol_with_other_assumptions():
    impostor = sp.Symbol("beta")  # declared nonnegative; this one has no assumptions
    with pytest.raises(DerivationError, match="not the symbol declared"):
        Derivation("bad", impostor, (impostor,), "bad", "test")


def test_derivation_name_must_be_identifier():
    with pytest.raises(DerivationError, match="identifier"):
        Derivation("not valid", sym.beta, (sym.beta,), "bad", "test")


def test_registry_lists_every_section(reg):
    sections = {d.section.split(".")[0] for d in reg.values()}
    assert sections == {"1", "2", "3", "4", "5", "6", "7", "8", "9"}
    assert set(reg) == set(names())
    for d in reg.values():
        assert d.summary and d.name.isidentifier()
        assert d.expr.free_symbols <= set(d.args)


def test_srepr_round_trip_of_every_derivation(reg):
    for d in reg.values():
        rebuilt = theory_cache.parse_srepr(sp.srepr(d.expr))
        assert rebuilt == d.expr, d.name
        for step in d.steps:
            assert theory_cache.parse_srepr(sp.srepr(step.expr)) == step.expr, d.name


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",
    "Symbol.__class__",
    "Add(*x)",
    "eval('1')",
    "Symbol('x', **{'positive': True})",
])
def test_parse_srepr_refuses_code(text):
    with pytest.raises(ValueError):
        theory_cache.parse_srepr(text)


def test_cache_cold_then_warm(tmp_path, monkeypatch):
    from grpodyn.theory import build

    monkeypatch.setenv("GRPODYN_CACHE_DIR", str(tmp_path))
    cold = registry(use_cache=False)
    theory_cache.store_entries(theory_cache.source_key(),
                               {n: build._to_entry(d) for n, d in cold.items()})
    build.clear()
    warm = registry()
    assert build.build_info().source == "cache"
    assert {n: d.expr for n, d in warm.items()} == {n: d.expr for n, d in cold.items()}
    assert [d.arg_names for d in warm.values()] == [d.arg_names for d in cold.values()]


def test_corrupt_cache_is_rederived(tmp_path, monkeypatch):
    from grpodyn.theory import build

    monkeypatch.setenv("GRPODYN_CACHE_DIR", str(tmp_path))
    key = theory_cache.source_key()
    (tmp_path / f"registry-{key}.json").write_text(f'{{"key": "{key}", "entries": {{"x": 1}}}}')
    build.clear()
    rebuilt = registry()
    assert build.build_info().source == "derived"
    assert "critical_stiffness" in rebuilt


def test_latex_uses_symbol_table(reg):
    text = reg["critical_stiffness"].latex()
    assert r"\beta" in text and "critical" in text
    assert reg["damping_ratio"]._repr_latex_().startswith("$")


def test_registry_order_does_not_depend_on_what_was_built_first(reg):
    """A derivation fetched with get() before the registry keeps the rendering order fixed."""
    from grpodyn.theory import build

    last = names()[-1]
    saved = dict(build._BUILT)
    try:
        build._BUILT.clear()
        build.get(last)
        assert tuple(registry()) == names()
    finally:
        build._BUILT.clear()
        build._BUILT.update(saved)


def test_the_registry_reads_compactly_and_names_close_matches():
    import grpodyn.theory as theory

    assert {"get", "names", "registry", "Derivation"} <= set(dir(theory))
    assert not {"Any", "annotations", "importlib"} & set(dir(theory))
    shown = repr(theory.get("autocorrelation"))
    assert shown.startswith("Derivation(autocorrelation(h, beta, k), section 6")
    assert "\n" not in shown
    assert max(len(repr(d)) for d in theory.registry().values()) < 300
    with pytest.raises(KeyError, match="close: critical_stiffness") as caught:
        theory.get("critical_stifness")
    assert len(str(caught.value)) < 300 and "names() lists all" in str(caught.value)
