"""Fuzzing of every loader: any input gives a Run that is right, or a clear LogFormatError.

Hypothesis writes logs of each format with hostile content (NaN and inf, strings in numeric
fields, missing keys, duplicate or decreasing steps, huge numbers, deep nesting, truncation,
wrong encodings, random bytes) and checks the contract of ``load_run``:

- it raises ``LogFormatError`` naming the file, and nothing else; or
- it returns a Run with finite, strictly increasing steps and finite rewards, one value per
  step in every metric, and a warning for every repair; for CSV logs the result is checked
  against an independent oracle of what the file says.

The other formats are fuzzed the same way: JSON arrays of step dicts, verl console (with
and without a Ray prefix) and file-logger JSONL, OpenRLHF progress-bar postfixes, TRL console
logs with progress counters and eval dicts, HF-Jobs JSON streams, MiniMind and reward-tensor
consoles, typed JSONL records with config records, W&B run directories and TRL checkpoint
directories (with a random training_args.bin beside, read by the restricted pickle reader).

A fixed corpus of broken files (tests/data/broken) runs as well. The number of inputs tried is
printed at the end of the test run (FUZZ_COUNTS).
"""

from __future__ import annotations

import collections
import json
import math
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpodyn.empirical.logs.loaders import LogFormatError, load_run

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


def _outcome(path: Path, kind: str, **options) -> object:
    """Load and check the contract; returns the Run, or None after a clear error. The input
    (a file or every file of a directory) is left byte for byte as it was."""
    FUZZ_COUNTS[kind] += 1
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    try:
        run = load_run(path, **options)
    except LogFormatError as error:
        assert str(path) in str(error), f"error does not name the file: {error}"
        assert "\n" not in str(error), "a multi-line error"
        return None
    finally:
        assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before, "input changed"
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
    cell is no data point (another metric's row); finite steps; a resumed run's abandoned rows
    dropped; a corrupt step (negative, or far out of place) dropped; sorted (stable), first of
    duplicates kept, rows with a non-finite reward dropped.
    Numbers in Python's syntax."""
    def number(cell: str) -> float:
        try:
            return float(cell.strip())
        except ValueError:
            return math.nan

    parsed = [(number(s), number(r)) for s, r in rows if r.strip()]
    parsed = [(s, r) for s, r in parsed if math.isfinite(s)]
    # a resumed run: a step back to one logged before (since the last return to the first
    # step, which starts a run appended) drops the earlier records from that step on
    runs, current = [], []
    for s, r in parsed:
        if current and s == parsed[0][0] and any(t > s for t, _ in current):
            runs.append(current)
            current = []
        elif current and s < current[-1][0] and any(t == s for t, _ in current):
            current = [(t, q) for t, q in current if t < s]
        current.append((s, r))
    parsed = [row for run in [*runs, current] for row in run]
    # a corrupt step: negative; or, where the steps do not increase, one of at most
    # max(3, 2%) records whose steps lie 10 median intervals beyond all the others, above or
    # below, held out of order (a smaller step later in the file, or a larger one earlier)
    steps = [s for s, _ in parsed]
    in_file = [s for s in steps if s >= 0]
    good = sorted(in_file)
    corrupt = set()
    if len(good) >= 3 and any(b < a for a, b in zip(in_file, in_file[1:], strict=False)):
        gaps = [b - a for a, b in zip(good, good[1:], strict=False)]
        reach = 10 * (statistics.median([g for g in gaps if g > 0]) if any(gaps) else 1.0)
        most = max(3, int(0.02 * len(good)))
        # a cluster: the smaller side of a wide gap, of at most `most` values
        top = [good[j] for j in range(len(good) - 1) if gaps[j] > reach
               and len(good) - 1 - j <= most and len(good) - 1 - j < j + 1]
        bottom = [good[j] for j in range(len(good) - 1) if gaps[j] > reach and j + 1 <= most
                  and j + 1 < len(good) - 1 - j]
        for i, s in enumerate(steps):
            if top and s > min(top) and any(t < s for t in steps[i + 1:]):
                corrupt.add(i)
            if bottom and 0 <= s <= max(bottom) and any(t > s for t in steps[:i]):
                corrupt.add(i)
    kept_rows = [(s, r) for i, (s, r) in enumerate(parsed) if s >= 0 and i not in corrupt]
    parsed = kept_rows
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


@FUZZ
@given(st.lists(entries, max_size=10), st.none() | st.floats(0, 1))
def test_json_array(records, cut):
    text = _truncate(json.dumps(records, allow_nan=True), cut)
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "history.json", text), "json_array")


verl_keys = st.sampled_from(["critic/score/mean", "critic/rewards/mean", "actor/entropy",
                             "actor/kl_loss", "actor/lr", "response_length/mean",
                             "val-core/a/b/reward/mean@1", "x", "step"])
verl_values = st.one_of(numbers.map(repr), numbers.map(lambda v: f"np.float64({v!r})"),
                        st.text(alphabet="ab:-() .0123456789e", max_size=8))


@FUZZ
@given(st.lists(st.tuples(st.integers(-3, 40), st.dictionaries(verl_keys, verl_values,
                                                                  max_size=5)), max_size=10),
       st.booleans(), st.booleans())
def test_verl_console_and_file_logger(lines, ray_prefix, as_jsonl):
    prefix = "(TaskRunner pid=12) " if ray_prefix else ""
    if as_jsonl:
        text = "\n".join(json.dumps({"step": s, "data": d}) for s, d in lines)
        name = "verl.jsonl"
    else:
        text = "\n".join(prefix + f"step:{s} - " + " - ".join(f"{k}:{v}" for k, v in d.items())
                         for s, d in lines)
        name = "verl.log"
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, name, text), "verl")


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(["reward", "rm", "kl", "actor_lr", "act_lr",
                                                  "policy_loss", "response_length", "glen"]),
                                verl_values, max_size=5), max_size=10),
       st.sampled_from(["Episode [1/1]", "Train epoch [1/1]", ""]))
def test_openrlhf_console(updates, label):
    text = "".join(f"\r{label}:  4%| | {i}/25 [00:01<00:10, 1.0s/it, "
                   + ", ".join(f"{k}={v}" for k, v in u.items()) + "]"
                   for i, u in enumerate(updates, start=1))
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "openrlhf.log", text), "openrlhf")


@FUZZ
@given(st.lists(st.tuples(entries, st.integers(0, 60), st.booleans()), max_size=10),
       st.sampled_from([None, 1, 5]), st.booleans())
def test_trl_console_counters_and_evals(items, logging_steps, stream):
    body = []
    for entry, counter, is_eval in items:
        body.append(f"\r 10%|#| {counter}/60 [00:01<00:09, 1.0s/it]\r")
        shown = {("eval_" + k if is_eval else k): v for k, v in entry.items()}
        body.append(repr(shown) + "\n")
    text = "".join(body)
    if stream:  # as an HF-Jobs JSON stream
        text = "[" + "\n,".join(json.dumps({"stream_name": "stdout", "data": b})
                                 for b in body) + "]"
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "train.log", text), "trl_console", logging_steps=logging_steps)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 30), verl_values, verl_values),
                max_size=10),
       st.lists(st.lists(numbers, max_size=5), max_size=6))
def test_minimind_and_reward_tensors(minimind, tensors):
    lines = [f"Epoch:[{e}/3]({i}/30), Reward: {r}, KL_ref: {k}" for e, i, r, k in minimind]
    lines += ["rewards: tensor([" + ", ".join(repr(v) for v in t) + "])" for t in tensors]
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "custom.log", "\n".join(lines)), "custom_console")


record_types = st.sampled_from(["eval", "rollout", "train", "config", "val", 3, None])


@FUZZ
@given(st.lists(st.tuples(record_types, entries), max_size=12))
def test_typed_records(records):
    lines = []
    for kind, entry in records:
        record = dict(entry)
        if kind is not None:
            record["type"] = kind
        if kind == "config":
            record["args"] = {"lr": entry.get("reward"), "group_size": entry.get("step")}
        lines.append(json.dumps(record, allow_nan=True))
    with tempfile.TemporaryDirectory() as folder:
        _outcome(_write(folder, "metrics.jsonl", "\n".join(lines)), "typed_jsonl")


@FUZZ
@given(st.lists(entries, max_size=8), st.binary(max_size=200), st.text(max_size=200),
       st.sampled_from(["wandb", "checkpoints"]))
def test_run_directories(history, args_bin, config_text, layout):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "run"
        if layout == "wandb":
            files = root / "files"
            files.mkdir(parents=True)
            (files / "wandb-history.jsonl").write_text(
                "\n".join(json.dumps({"_step": i, **e}, allow_nan=True)
                          for i, e in enumerate(history)))
            (files / "config.yaml").write_text(config_text)
        else:
            for n in (10, 20):
                checkpoint = root / f"checkpoint-{n}"
                checkpoint.mkdir(parents=True)
                (checkpoint / "trainer_state.json").write_text(
                    json.dumps({"log_history": history}, allow_nan=True))
                (checkpoint / "training_args.bin").write_bytes(args_bin)
            (root / "config.json").write_text(config_text)
        _outcome(root, "directories")


@FUZZ
@given(st.binary(max_size=400))
def test_restricted_pickle_reader(raw):
    from grpodyn.empirical.logs.pickled import PickleReadError, read_pickled_args

    FUZZ_COUNTS["pickle"] += 1
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "training_args.bin", b"\x80\x04" + raw)
        try:
            value = read_pickled_args(path)
        except PickleReadError:
            return
        assert isinstance(value, dict)


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
