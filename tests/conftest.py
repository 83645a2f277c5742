"""Test configuration: a guard against importing the wrong grpodyn, and an isolated cache."""

from __future__ import annotations

import importlib.util
import os
import tempfile

import pytest
from hypothesis import settings

_spec = importlib.util.find_spec("grpodyn.theory")
if _spec is None:  # pragma: no cover - only on a broken set-up
    raise pytest.UsageError(
        "grpodyn.theory cannot be imported: the repository's grpodyn/ folder shadows the "
        "installed package. Install with `pip install -e .[test]` and run `pytest` (which uses "
        "--import-mode=importlib), not `python -m pytest` from the repository root."
    )

# In CI, hypothesis draws the same examples every run (no flaky red builds); locally it explores.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Derivations cached by the tests go to a private directory, never the user's cache.
os.environ.setdefault("GRPODYN_CACHE_DIR", tempfile.mkdtemp(prefix="grpodyn-test-cache-"))


@pytest.fixture(scope="session")
def reg():
    """The whole derivation registry."""
    from grpodyn.theory import registry

    return registry()


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
