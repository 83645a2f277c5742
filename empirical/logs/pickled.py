"""Read TRL's ``training_args.bin`` without running anything from it.

``Trainer`` saves its arguments with ``torch.save(args)``: a pickle (inside a zip archive since
torch 1.6). The standard unpickler would import and call whatever the file names, so this module
never uses it. It walks the pickle's opcodes (``pickletools.genops`` only decodes them) on a
small stack machine of its own that builds plain containers only: a class or function the file
names becomes ``{"__class__": "module.name"}``, a call of it (REDUCE, NEWOBJ) a dict with the
arguments (``"__args__"``), and BUILD merges the object's state into that dict. Nothing is
imported, looked up or called, so a hostile pickle (``os.system``, ``subprocess``, ``eval``,
``builtins.exec`` payloads) yields a harmless dict naming the call it wanted.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["read_pickled_args", "PickleReadError", "plain"]

_MAX_BYTES = 16 * 2**20
_MAX_OPS = 2_000_000


class PickleReadError(ValueError):
    """The file is not a pickle this reader can walk."""


class _Mark:
    pass


_MARK = _Mark()


def _global(module: str, name: str) -> dict[str, Any]:
    return {"__class__": f"{module}.{name}"}


def _call(func: Any, args: Any, kwargs: Any = None) -> Any:
    """Return what a call would have built, as data: a dict naming the callable and arguments."""
    name = func.get("__class__") if isinstance(func, dict) else None
    if name == "copyreg._reconstructor" and isinstance(args, tuple) and args:
        return dict(args[0]) if isinstance(args[0], dict) else {"__class__": str(args[0])}
    if name == "copyreg.__newobj__" and isinstance(args, tuple) and args:
        func, args = args[0], args[1:]
        name = func.get("__class__") if isinstance(func, dict) else None
    out: dict[str, Any] = {"__class__": name if isinstance(name, str) else "?"}
    if args:
        out["__args__"] = list(args) if isinstance(args, (tuple, list)) else [args]
    if kwargs:
        out["__kwargs__"] = kwargs
    return out


def _walk(data: bytes) -> Any:
    stack: list[Any] = []
    memo: dict[int, Any] = {}
    count = 0

    def pop_mark() -> list[Any]:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise PickleReadError("MARK missing")

    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(data)):
            count += 1
            if count > _MAX_OPS:
                raise PickleReadError("too many opcodes")
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                break
            if name == "MARK":
                stack.append(_MARK)
            elif name in ("EMPTY_DICT",):
                stack.append({})
            elif name in ("EMPTY_LIST",):
                stack.append([])
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name in ("EMPTY_SET",):
                stack.append([])
            elif name in ("NONE",):
                stack.append(None)
            elif name in ("NEWTRUE", "NEWFALSE"):
                stack.append(name == "NEWTRUE")
            elif name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4",
                          "FLOAT", "BINFLOAT", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
                          "BINUNICODE8", "STRING", "BINSTRING", "SHORT_BINSTRING",
                          "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"):
                stack.append(arg)
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                items = tuple(stack[-n:])
                del stack[-n:]
                stack.append(items)
            elif name == "TUPLE":
                stack.append(tuple(pop_mark()))
            elif name == "LIST":
                stack.append(pop_mark())
            elif name == "DICT":
                items = pop_mark()
                stack.append({_key(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)})
            elif name in ("FROZENSET",):
                stack.append(pop_mark())
            elif name == "APPEND":
                value = stack.pop()
                if isinstance(stack[-1], list):
                    stack[-1].append(value)
            elif name == "APPENDS":
                items = pop_mark()
                if isinstance(stack[-1], list):
                    stack[-1].extend(items)
            elif name == "ADDITEMS":
                items = pop_mark()
                if isinstance(stack[-1], list):
                    stack[-1].extend(items)
            elif name == "SETITEM":
                value, key = stack.pop(), stack.pop()
                if isinstance(stack[-1], dict):
                    stack[-1][_key(key)] = value
            elif name == "SETITEMS":
                items = pop_mark()
                if isinstance(stack[-1], dict):
                    for i in range(0, len(items) - 1, 2):
                        stack[-1][_key(items[i])] = items[i + 1]
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                stack.append(memo.get(arg))
            elif name == "GLOBAL":
                module, _, attr = str(arg).partition(" ")
                stack.append(_global(module, attr))
            elif name == "STACK_GLOBAL":
                attr, module = stack.pop(), stack.pop()
                stack.append(_global(str(module), str(attr)))
            elif name == "REDUCE":
                args, func = stack.pop(), stack.pop()
                stack.append(_call(func, args))
            elif name == "NEWOBJ":
                args, cls = stack.pop(), stack.pop()
                stack.append(_call(cls, args))
            elif name == "NEWOBJ_EX":
                kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
                stack.append(_call(cls, args, kwargs))
            elif name == "OBJ":
                items = pop_mark()
                stack.append(_call(items[0], tuple(items[1:])) if items else {})
            elif name == "INST":
                module, _, attr = str(arg).partition(" ")
                stack.append(_call(_global(module, attr), tuple(pop_mark())))
            elif name == "BUILD":
                state = stack.pop()
                target = stack[-1]
                if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
                    state = {**(state[0] or {}), **(state[1] or {})} \
                        if all(isinstance(s, dict) or s is None for s in state) else {}
                if isinstance(target, dict) and isinstance(state, dict):
                    target.update({_key(k): v for k, v in state.items()})
            elif name in ("BINPERSID", "PERSID"):
                if name == "BINPERSID":
                    stack.pop()
                stack.append({"__class__": "persistent_id"})
            elif name == "POP":
                stack.pop()
            elif name == "POP_MARK":
                pop_mark()
            elif name == "DUP":
                stack.append(stack[-1])
            elif name in ("EXT1", "EXT2", "EXT4"):
                stack.append({"__class__": f"extension.{arg}"})
            elif name == "NEXT_BUFFER" or name == "READONLY_BUFFER":
                stack.append(None)
            else:
                raise PickleReadError(f"unsupported opcode {name}")
    except (ValueError, IndexError, KeyError, TypeError, RecursionError) as exc:
        if isinstance(exc, PickleReadError):
            raise
        raise PickleReadError(f"not a readable pickle ({type(exc).__name__})") from None
    if not stack:
        raise PickleReadError("empty pickle")
    return stack[-1]


def _key(key: Any) -> Any:
    return key if isinstance(key, (str, int, float, bool)) or key is None else repr(key)[:80]


def plain(value: Any) -> Any:
    """Return a recorded enum-like object (``IntervalStrategy("steps")``) as its plain argument."""
    if isinstance(value, dict) and set(value) <= {"__class__", "__args__"} \
            and len(value.get("__args__", ())) == 1 \
            and isinstance(value["__args__"][0], (str, int, float, bool)):
        return value["__args__"][0]
    return value


def read_pickled_args(path: Path) -> dict[str, Any]:
    """Return the state of the object pickled in ``path`` (a torch zip archive or a raw pickle).

    As a plain dict; raises :class:`PickleReadError` when it cannot.
    """
    try:
        size = path.stat().st_size
        if size > _MAX_BYTES:
            raise PickleReadError(f"{size} bytes is more than a training_args.bin holds")
        raw = path.read_bytes()
    except OSError as exc:
        raise PickleReadError(f"cannot read ({exc.strerror})") from None
    if raw[:2] == b"PK":
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                name = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
                if name is None:
                    raise PickleReadError("a zip archive without data.pkl")
                if archive.getinfo(name).file_size > _MAX_BYTES:
                    raise PickleReadError("data.pkl too large")
                raw = archive.read(name)
        except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
            raise PickleReadError(f"a damaged zip archive ({exc})") from None
    value = _walk(raw)
    if not isinstance(value, dict):
        raise PickleReadError(f"holds a {type(value).__name__}, not an object with settings")
    return {str(k): plain(v) for k, v in value.items()}
