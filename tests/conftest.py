"""Test configuration: a guard against importing the wrong grpodyn, and an isolated cache."""

from __future__ import annotations

import importlib.util
import os
import tempfile

import pytest

_spec = importlib.util.find_spec("grpodyn.theory")
if _spec is None:  # pragma: no cover - only on a broken set-up
    raise pytest.UsageError(
        "grpodyn.theory cannot be imported: the repository's grpodyn/ folder shadows the "
        "installed package. Install with `pip install -e .[test]` and run `pytest` (which uses "
        "--import-mode=importlib), not `python -m pytest` from the repository root."
    )

# Derivations cached by the tests go to a private directory, never the user's cache.
os.environ.setdefault("GRPODYN_CACHE_DIR", tempfile.mkdtemp(prefix="grpodyn-test-cache-"))


@pytest.fixture(scope="session")
def reg():
    """The whole derivation registry."""
    from grpodyn.theory import registry

    return registry()
