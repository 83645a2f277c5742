"""Where the study's files live: ``studies/deepnet/data``, and the package's report files.

``grpodyn report`` reads three files of this study (``comparison.json``, ``predictions.json``,
``predictions_two_mode.json``); they ship with the package in ``empirical/data/deepnet``
(:data:`grpodyn.empirical.deepnet.section.DATA`). Every other file (measurements, drift curves,
runs, observations) lives in the study's ``data`` folder. :func:`data_file` resolves a name in
the default folder to the right one of the two; any other folder (a test's temporary folder)
holds all of them.
"""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.deepnet.section import DATA as REPORTED_DATA

__all__ = ["DATA", "REPORTED", "data_file"]

#: The study's data folder.
DATA = Path(__file__).resolve().parents[1] / "data"
#: The files ``grpodyn report`` reads, shipped in the package.
REPORTED = ("comparison.json", "predictions.json", "predictions_two_mode.json")


def data_file(out: Path, name: str) -> Path:
    """Return the path of the file ``name`` of the folder ``out``.

    Parameters
    ----------
    out : Path
        The data folder (the study's :data:`DATA` by default).
    name : str
        The file name.

    Returns
    -------
    Path
        ``out / name``, except for a reported file in the default folder, which lives in the
        package's :data:`REPORTED_DATA`.
    """
    if name in REPORTED and Path(out).resolve() == DATA.resolve():
        return REPORTED_DATA / name
    return Path(out) / name
