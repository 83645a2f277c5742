"""Test configuration: a guard against importing the wrong grpodyn, an isolated cache, fixtures."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

_spec = importlib.util.find_spec("grpodyn.theory")
if _spec is None:  # pragma: no cover - only on a broken set-up
    raise pytest.UsageError(
        "grpodyn.theory cannot be imported: the repository's grpodyn/ folder shadows the "
        "installed package. Install with `pip install -e .[test]` and run `pytest` (which uses "
        "--import-mode=importlib), not `python -m pytest` from the repository root."
    )

# The deep-network study's scripts (studies/deepnet, not installed) are importable as
# ``deepnet_study`` by the tests that cover them; those tests skip where the folder is absent.
_DEEPNET_STUDY = Path(__file__).resolve().parents[1] / "studies" / "deepnet"
if _DEEPNET_STUDY.is_dir() and str(_DEEPNET_STUDY) not in sys.path:
    sys.path.insert(0, str(_DEEPNET_STUDY))

# In CI, hypothesis draws the same examples every run (no flaky red builds); locally it explores.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Derivations cached by the tests go to a private directory, never the user's cache.
os.environ.setdefault("GRPODYN_CACHE_DIR", tempfile.mkdtemp(prefix="grpodyn-test-cache-"))


@functools.cache
def _registry():
    """The whole derivation registry, built once for every test that asks for it."""
    from grpodyn.theory import registry

    return registry()


@pytest.fixture
def without_pandas(monkeypatch):
    """Make ``import pandas`` fail, as on a machine without it (for the to_pandas messages)."""
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)


@pytest.fixture(scope="module")
def reg():
    """The whole derivation registry (module-scoped fixtures use it too)."""
    return _registry()


@pytest.fixture(scope="module")
def categorical():
    """The simulator module of studies/diagnosis (a folder of the repository, not installed)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "studies" / "diagnosis" / "categorical_sim.py").exists():
        pytest.skip("studies/diagnosis lives in the repository, absent here")
    sys.path.insert(0, str(root))
    try:
        from studies.diagnosis import categorical_sim
    finally:
        sys.path.remove(str(root))
    return categorical_sim


def pytest_terminal_summary(terminalreporter):
    """How many inputs the loader fuzzing tried (tests/test_fuzz_loaders.py)."""
    import sys

    module = next((m for name, m in list(sys.modules.items())
                   if name.endswith("test_fuzz_loaders")), None)
    counts = getattr(module, "FUZZ_COUNTS", None)
    if counts:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(f"loader fuzzing: {sum(counts.values())} inputs tried "
                                    f"({detail})")
