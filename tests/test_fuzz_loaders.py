"""Fuzzing of every loader: any input gives a Run that is right, or a clear LogFormatError.

Hypothesis writes logs of each format with hostile content (NaN and inf, strings in numeric
fields, missing keys, duplicate or decreasing steps, huge numbers, deep nesting, truncation,
wrong encodings, random bytes) and checks the contract of ``load_run``:

- it raises ``LogFormatError`` naming the file, and nothing else; or
- it returns a Run with finite, strictly increasing steps and finite rewards, one value per
  step in every metric, and a warning for every repair; for CSV logs the result is checked
  against an independent oracle of what the file says.

A fixed corpus of broken files (tests/data/broken) runs as well. The number of inputs tried is
printed at the end of the session (FUZZ_COUNTS).
"""

from __future__ import annotations

import collections
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpodyn.empirical.loaders import LogFormatError, load_run

FUZZ_COUNTS: collections.Counter = collections.Counter()
BROKEN = Path(__file__).parent / "data" / "broken"
#: Examples per fuzz test; GRPODYN_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz_loaders.py for a
#: long run on demand.
FUZZ = settings(max_examples=int(os.environ.get("GRPODYN_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(),
                    st.integers(min_value=10**300, max_value=10**400))
scalars = st.one_of(numbers, st.text(max_size=8), st.booleans(), st.none())
values = st.one_of(scalars, st.lists(scalars, max_size=3),
                   st.dictionaries(st.text(max_size=4), scalars, max_size=2))
metric_names = st.sampled_from(["step", "reward", "reward_std", "entropy", "kl", "loss",
                                "learning_rate", "frac_reward_zero_std", "train/reward",
                                "eval/reward", "global_step", "x"])
entries = st.dictionaries(metric_names, values, max_size=6)


def _outcome(path: Path, kind: str) -> object:
    """Load and check the contract; returns the Run, or None after a clear error."""
    FUZZ_COUNTS[kind] += 1
    try:
        run = load_run(path)
    except LogFormatError as error:
        assert str(path) in str(error), f"error does not name the file: {error}"
        return None
    assert run.n_points >= 1
    assert np.all(np.isfinite(run.steps)) and np.all(np.isfinite(run.reward))
    assert np.all(run.steps[1:] > run.steps[:-1])
    for name, series in run.metrics.items():
        assert len(series) == run.n_points, name
    return run


def _write(folder: str, name: str, content: str | bytes) -> Path:
    path = Path(folder) / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _truncate(text: str, cut: float | None) -> str:
    return text if cut is None else text[: int(len(text) * cut)]


@FUZZ
@given(st.lists(entries, max_size=12), st.none() | st.floats(0, 1))
def test_trainer_state(history, cut):
    text = _truncate(json.dumps({"log_history": history}, allow_nan=True), cut)
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "trainer_state.json", text), "trainer_state")


@FUZZ
@given(st.lists(entries, max_size=12), st.none() | st.floats(0, 1))
def test_jsonl(lines, cut):
    text = _truncate("\n".join(json.dumps(e, allow_nan=True) for e in lines), cut)
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "metrics.jsonl", text), "jsonl")


@FUZZ
@given(st.lists(entries, max_size=12), st.booleans())
def test_console(lines, with_noise):
    body = [repr(e) for e in lines]
    if with_noise:
        body = [x for line in body for x in ("INFO step done", line)]
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "train.log", "\n".join(body)), "console")


cells = st.one_of(st.sampled_from(["", "nan", "inf", "-inf", "abc", "1e999", "0x10", " 2 ",
                                   "1,5", '"3"', "NaN", "1_0"]),
                  st.floats(allow_nan=False, allow_infinity=False).map(repr),
                  st.integers(-5, 30).map(str))


def _csv_oracle(rows: list[tuple[str, str]]) -> tuple[list[float], list[float]] | None:
    """What a step,reward CSV says, independently of the loader: a row with an empty reward
    cell is no data point (another metric's row); finite steps, sorted (stable), first of
    duplicates kept, rows with a non-finite reward dropped. Numbers in Python's syntax."""
    def number(cell: str) -> float:
        try:
            return float(cell.strip())
        except ValueError:
            return math.nan

    parsed = [(number(s), number(r)) for s, r in rows if r.strip()]
    parsed = [(s, r) for s, r in parsed if math.isfinite(s)]
    parsed.sort(key=lambda sr: sr[0])
    seen, kept = set(), []
    for s, r in parsed:
        if s not in seen:
            seen.add(s)
            kept.append((s, r))
    kept = [(s, r) for s, r in kept if math.isfinite(r)]
    return ([s for s, _ in kept], [r for _, r in kept]) if kept else None


def _is_finite_number(cell: str) -> bool:
    try:
        return math.isfinite(float(cell.strip()))
    except ValueError:
        return False


@FUZZ
@given(st.lists(st.tuples(cells, cells), max_size=15))
def test_csv_against_oracle(rows):
    safe = [(s, r) for s, r in rows if "," not in s + r and '"' not in s + r]
    text = "step,reward\n" + "\n".join(f"{s},{r}" for s, r in safe) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        run = _outcome(_write(folder, "log.csv", text), "csv")
    expected = _csv_oracle(safe)
    if expected is None:
        assert run is None
        return
    assert run is not None
    assert list(run.steps) == expected[0]
    assert list(run.reward) == expected[1]
    given_steps = [float(s) for s, r in safe if r.strip() and _is_finite_number(s)]
    repaired = len(expected[0]) < sum(1 for _, r in safe if r.strip()) or \
        any(b < a for a, b in zip(given_steps, given_steps[1:], strict=False))
    if repaired:
        assert run.warnings, "a repaired log must say what was repaired"


@FUZZ
@given(st.lists(st.lists(cells, min_size=1, max_size=6), max_size=10),
       st.lists(st.sampled_from(["step", "reward", "entropy", "Step", "run-a - train/reward",
                                 "run-a - train/reward__MIN", "kl", "x"]), min_size=1,
                max_size=6))
def test_wide_and_wandb_csv(body, header):
    text = "\n".join([",".join(header)] + [",".join(row) for row in body])
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "export.csv", text), "wide_csv")


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["a", "b", ""]), cells,
                          st.sampled_from(["reward", "train/reward", "entropy", "kl", "zz"]),
                          cells), max_size=15))
def test_long_csv(rows):
    text = "run,step,metric,value\n" + "\n".join(",".join(r) for r in rows)
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "long.csv", text), "long_csv")


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([".json", ".jsonl", ".csv", ".tsv", ".log",
                                                  ".txt", ""]))
def test_random_bytes(raw, suffix):
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, f"log{suffix}", raw), "bytes")


@FUZZ
@given(st.lists(entries, min_size=1, max_size=6),
       st.sampled_from(["utf-16", "utf-8-sig", "latin-1", "cp1252"]),
       st.sampled_from([".json", ".jsonl", ".log"]))
def test_encodings(lines, encoding, suffix):
    if suffix == ".json":
        text = json.dumps({"log_history": lines, "note": "résumé ü"})
    elif suffix == ".jsonl":
        text = "\n".join(json.dumps(e) for e in lines)
    else:
        text = "\n".join(repr(e) for e in lines) + "\n# résumé ü"
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, f"log{suffix}", text.encode(encoding, errors="replace")),
                 "encodings")


@pytest.mark.parametrize("depth", [50, 5000, 200_000])
@pytest.mark.parametrize("suffix,opener", [(".json", '{"log_history": '), (".jsonl", ""),
                                           (".log", "{'reward': ")])
def test_deep_nesting(tmp_path, depth, suffix, opener):
    path = tmp_path / f"deep{suffix}"
    path.write_text(opener + "[" * depth + "]" * depth + ("}" if opener else ""))
    _outcome(path, "deep")


def test_huge_file_is_refused_without_reading(tmp_path):
    path = tmp_path / "huge.csv"
    with open(path, "wb") as handle:  # sparse: no disk used
        handle.truncate(600 * 2**20)
    with pytest.raises(LogFormatError, match="byte limit"):
        load_run(path)
    FUZZ_COUNTS["huge"] += 1


@pytest.mark.parametrize("path", sorted(BROKEN.iterdir()), ids=lambda p: p.name)
def test_broken_corpus(path):
    """Each file of the corpus: a clear error, or a repair that is warned."""
    expected = json.loads((BROKEN / "EXPECTED.json").read_text())
    if path.name == "EXPECTED.json":
        assert sorted(expected) == sorted(p.name for p in BROKEN.iterdir()
                                          if p.name != "EXPECTED.json")
        return
    outcome = expected[path.name]
    if outcome.startswith("error:"):
        with pytest.raises(LogFormatError) as info:
            load_run(path)
        assert str(path) in str(info.value) and outcome[len("error:"):] in str(info.value)
    else:
        run = _outcome(path, "corpus")
        assert run is not None
        if outcome == "ok":
            assert not run.warnings
        else:
            assert any(outcome[len("warn:"):] in w for w in run.warnings), run.warnings
    FUZZ_COUNTS["corpus"] += 1


def test_input_is_never_modified(tmp_path):
    """Loading leaves the file byte for byte and its modification time as they were."""
    path = tmp_path / "log.csv"
    path.write_text("step,reward\n2,0.2\n1,0.1\n")
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    load_run(path)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
