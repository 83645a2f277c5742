"""No evaluation of user input anywhere in the package, enforced on the source.

Scans every module of grpodyn, theory, numerics and empirical (their abstract syntax trees) for
calls that run or unpickle data: eval, exec, pickle/marshal/shelve/dill, yaml.load, sympify
without strict=True, parse_expr, torch.load without weights_only=True, subprocess with
shell=True. The one exec compiles code that codegen renders from the derivation registry (no
user string reaches it) and is listed here by file and function.
"""

from __future__ import annotations

import ast
import io
import os
import pickle  # tests only: to WRITE hostile files (and show one is live)
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("grpodyn", "theory", "numerics", "empirical")
ALLOWED = {("numerics/compiled.py", "compile_derivation", "exec")}
FORBIDDEN_NAMES = {"eval", "exec", "parse_expr", "__import__"}
FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "dill", "cloudpickle"}


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _findings(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    found: list[str] = []

    class Scan(ast.NodeVisitor):
        scope = "<module>"

        def visit_FunctionDef(self, node):
            outer, self.scope = self.scope, node.name
            self.generic_visit(node)
            self.scope = outer

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Import(self, node):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n.split(".")[0] in FORBIDDEN_MODULES for n in names):
                found.append(f"{rel}:{node.lineno}: imports {names}")

        visit_ImportFrom = visit_Import

        def visit_Call(self, node):
            callee = node.func
            bare = callee.id if isinstance(callee, ast.Name) else ""
            name = bare or (callee.attr if isinstance(callee, ast.Attribute) else "")
            owner = callee.value.id if isinstance(callee, ast.Attribute) and \
                isinstance(callee.value, ast.Name) else ""
            where = f"{rel}:{node.lineno} in {self.scope}: {owner + '.' if owner else ''}{name}"
            if (bare in FORBIDDEN_NAMES or (owner == "builtins" and name in FORBIDDEN_NAMES)
                    or name == "parse_expr") and (rel, self.scope, name) not in ALLOWED:
                found.append(where)
            if name == "sympify" and not _is_true(_keyword(node, "strict")):
                found.append(where + " without strict=True")
            if owner == "torch" and name == "load" and \
                    not _is_true(_keyword(node, "weights_only")):
                found.append(where + " without weights_only=True")
            if owner == "yaml" and name in ("load", "unsafe_load", "full_load"):
                found.append(where)
            if _is_true(_keyword(node, "shell")):
                found.append(where + " with shell=True")
            self.generic_visit(node)

    Scan().visit(ast.parse(path.read_text(encoding="utf-8")))
    return sorted(set(found))


def test_the_scan_sees_every_module():
    assert len(_sources()) > 30


@pytest.mark.parametrize("snippet,needle", [
    ("eval(x)", "eval"), ("import pickle", "pickle"), ("sp.sympify(s)", "strict"),
    ("torch.load(f)", "weights_only"), ("subprocess.run(c, shell=True)", "shell"),
    ("from pickle import loads", "pickle"), ("yaml.load(f)", "yaml"),
])
def test_the_scan_catches_what_it_forbids(tmp_path, snippet, needle):
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f(x, s, f, c):\n    {snippet}\n")
    assert any(needle in finding for finding in _findings(probe)), snippet


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_evaluation_of_input(path):
    assert _findings(path) == []


# --------------------------------------------------------------------------- training_args.bin
# Hostile pickles (written here with the standard pickler; the package never imports it) must
# not run anything when read by grpodyn's restricted reader: each payload would create a
# sentinel file, which must not appear.

def _payloads(sentinel: Path) -> dict[str, bytes]:
    command = f"touch {sentinel}"

    class System:
        def __reduce__(self):
            return (os.system, (command,))

    class Subprocess:
        def __reduce__(self):
            import subprocess

            return (subprocess.call, (["touch", str(sentinel)],))

    class Eval:
        def __reduce__(self):
            return (eval, (f"open({str(sentinel)!r}, 'w').close()",))

    class Exec:
        def __reduce__(self):
            import builtins

            return (builtins.exec, (f"open({str(sentinel)!r}, 'w').close()",))

    class Inside:  # a payload nested in the state of a plausible arguments object
        def __reduce__(self):
            return (dict, (), {"learning_rate": 1e-5, "hook": System()})

    raw = {"os.system": pickle.dumps(System(), protocol=2),
           "subprocess": pickle.dumps(Subprocess(), protocol=4),
           "eval": pickle.dumps(Eval(), protocol=0),
           "builtins.exec": pickle.dumps(Exec(), protocol=5),
           "nested in state": pickle.dumps(Inside(), protocol=3),
           # hand-written: GLOBAL posix system, REDUCE, then BUILD onto the result
           "raw opcodes": b"cposix\nsystem\n(V" + command.encode() + b"\ntR}bcbuiltins\n"
                          b"getattr\n(cbuiltins\n__import__\n(Vos\ntRVsystem\ntR(V"
                          + command.encode() + b"\ntR."}
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as handle:  # torch.save's zip layout
        handle.writestr("archive/data.pkl", raw["os.system"])
    raw["torch zip"] = archive.getvalue()
    return raw


def test_hostile_training_args_bin_runs_nothing(tmp_path):
    from grpodyn.empirical.logs.pickled import PickleReadError, read_pickled_args

    sentinel = tmp_path / "HACKED"
    payloads = _payloads(sentinel)
    for name, raw in payloads.items():
        path = tmp_path / f"{name.replace(' ', '_')}.bin"
        path.write_bytes(raw)
        try:
            value = read_pickled_args(path)
        except PickleReadError:
            value = None
        assert not sentinel.exists(), f"{name}: the payload ran"
        if value is not None:  # a plain dict naming what it wanted, nothing else
            assert all(isinstance(k, str) for k in value), name
    # the same payloads beside a log: the log loads, the file is skipped or read as data
    from grpodyn.empirical.logs.loaders import load_run

    log = tmp_path / "run" / "trainer_state.json"
    log.parent.mkdir()
    log.write_text('{"log_history": [{"step": 1, "reward": 0.1}, {"step": 2, "reward": 0.2}]}')
    for raw in payloads.values():
        (log.parent / "training_args.bin").write_bytes(raw)
        run = load_run(log.parent)
        assert run.n_points == 2 and not sentinel.exists()
    # the payloads are live: the standard unpickler does run them (so this test can fail)
    pickle.loads(payloads["os.system"])
    assert sentinel.exists()


def test_a_real_training_args_bin_is_read_as_plain_data(tmp_path):
    from grpodyn.empirical.logs.pickled import read_pickled_args

    path = Path(__file__).parent / "data" / "formats" / "trl_run" / "checkpoint-60" / \
        "training_args.bin"
    args = read_pickled_args(path)
    assert args["__class__"] == "trl.trainer.grpo_config.GRPOConfig"
    assert (args["learning_rate"], args["num_generations"], args["beta"]) == (2e-5, 4, 0.04)
    assert args["lr_scheduler_type"] == "linear"  # an enum recorded as its value

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, (str, int, float, bool, type(None))) and plain(v)
                       for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return all(plain(v) for v in value)
        return isinstance(value, (str, bytes, int, float, bool, type(None)))

    assert plain(args)


@pytest.mark.parametrize("raw", [b"", b"\x80\x05", b"garbage", b"PK\x03\x04broken", b"(((((.",
                                 b"\x80\x02]q\x00(K\x01K\x02e."])
def test_broken_pickles_fail_with_a_reason(tmp_path, raw):
    from grpodyn.empirical.logs.pickled import PickleReadError, read_pickled_args

    path = tmp_path / "training_args.bin"
    path.write_bytes(raw)
    with pytest.raises(PickleReadError):
        read_pickled_args(path)


def test_shared_and_cyclic_configs_do_not_blow_up(tmp_path):
    """A pickle or YAML file whose dicts refer to each other many times over: flattened once."""
    from grpodyn.empirical.logs.config import flatten, meta_from_config

    node: dict = {"lr": 1e-5}
    for _ in range(30):  # 30 levels of 50 references to one dict: 50**30 paths if expanded
        node = {f"k{i}": node for i in range(50)}
    node["self"] = node
    flat = flatten(node)
    assert len(flat) <= 12 * 60
    meta_from_config(node, "file:x", "x")  # returns: no explosion
