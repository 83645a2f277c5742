"""Hash of the theory sources, computable without importing sympy.

Generated code records this hash; a mismatch means the theory changed after generation.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["theory_source_hash"]

_THEORY_DIR = Path(__file__).resolve().parent


def theory_source_hash() -> str:
    """sha256 over the names and bytes of the theory layer's ``*.py`` files (32 hex digits)."""
    digest = hashlib.sha256()
    for path in sorted(_THEORY_DIR.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]
