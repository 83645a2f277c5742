"""Where the studies' data live: the repository's ``studies/<study>/data`` folders.

The installed package ships only the data of its main job (``grpodyn report``) and the learned
prior's weights, under ``empirical/data``. The runs the studies were made on (the tiny-model
grids and test bed, the deep network's runs) live in the repository's ``studies/`` tree, which
a wheel does not install. :func:`study_data` finds them: in the ``studies/`` folder beside the
package's source tree (a checkout, or an editable install), or in the folder the environment
variable ``GRPODYN_STUDIES`` names. :func:`study_path` gives the same path without checking it,
for defaults computed at import time.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["STUDIES_ENV", "StudyDataMissing", "studies_root", "study_data", "study_folder",
           "study_path"]

#: The environment variable naming a ``studies/`` folder (of a checkout) to read data from.
STUDIES_ENV = "GRPODYN_STUDIES"
#: The ``studies/`` folder of the checkout this package was imported from.
_CHECKOUT_STUDIES = Path(__file__).resolve().parents[1] / "studies"


class StudyDataMissing(FileNotFoundError):
    """A study's data folder is absent (an installed wheel holds no ``studies/`` tree)."""


def studies_root() -> Path:
    """Return the ``studies/`` folder in use (``$GRPODYN_STUDIES``, else the checkout's).

    Returns
    -------
    Path
        The folder; it need not exist (see :func:`study_data`).
    """
    named = os.environ.get(STUDIES_ENV)
    return Path(named).expanduser() if named else _CHECKOUT_STUDIES


def study_path(study: str, *parts: str) -> Path:
    """Return ``studies/<study>/data/<parts...>`` without checking that it exists.

    Parameters
    ----------
    study : str
        The study's folder name (``"tiny_grids"``, ``"deepnet"``, ...).
    *parts : str
        Path parts below the study's ``data`` folder.

    Returns
    -------
    Path
        The path, existing or not.
    """
    return studies_root().joinpath(study, "data", *parts)


def study_data(study: str, *parts: str) -> Path:
    """Return ``studies/<study>/data/<parts...>``, refusing a path that does not exist.

    Parameters
    ----------
    study, *parts : str
        The study's folder name and the path parts below its ``data`` folder, as for
        :func:`study_path`.

    Returns
    -------
    Path
        The existing file or folder.

    Raises
    ------
    StudyDataMissing
        When the path is absent, with a message that says where the data live.
    """
    return study_folder(study_path(study, *parts))


def study_folder(path: str | Path) -> Path:
    """Return ``path`` as a Path, refusing one that does not exist.

    Parameters
    ----------
    path : str or Path
        A data file or folder, usually a default made by :func:`study_path`.

    Returns
    -------
    Path
        The existing path.

    Raises
    ------
    StudyDataMissing
        When the path is absent, with a message that says where the studies' data live.
    """
    path = Path(path)
    if not path.exists():
        raise StudyDataMissing(
            f"{path}: no such data; the studies' data are not installed with the package, "
            f"they live in the repository's studies/<study>/data folders (use a checkout, "
            f"or set {STUDIES_ENV} to its studies/ folder)")
    return path
