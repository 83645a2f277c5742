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


#: opcodes that push their argument as it is (numbers, strings, bytes)
_LITERALS = frozenset({"INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT",
                       "BINFLOAT", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
                       "STRING", "BINSTRING", "SHORT_BINSTRING", "BINBYTES", "SHORT_BINBYTES",
                       "BINBYTES8", "BYTEARRAY8"})
#: opcodes that push an empty container (a set is kept as a list)
_EMPTY = {"EMPTY_DICT": dict, "EMPTY_LIST": list, "EMPTY_TUPLE": tuple, "EMPTY_SET": list}


class _Machine:
    """The stack and memo of one walk; each opcode is one :meth:`step`."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}

    def pop_mark(self) -> list[Any]:
        """Pop the items above the topmost MARK and the MARK itself; return the items."""
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise PickleReadError("MARK missing")

    def step(self, name: str, arg: Any) -> None:
        """Run the opcode ``name`` with its argument ``arg`` on the stack."""
        if not (self._push(name, arg) or self._fill(name, arg) or self._invoke(name, arg)):
            raise PickleReadError(f"unsupported opcode {name}")

    def _push(self, name: str, arg: Any) -> bool:
        """Opcodes that push a value built from the argument, the memo or marked items."""
        stack = self.stack
        if name == "MARK":
            stack.append(_MARK)
        elif name in _EMPTY:
            stack.append(_EMPTY[name]())
        elif name == "NONE":
            stack.append(None)
        elif name in ("NEWTRUE", "NEWFALSE"):
            stack.append(name == "NEWTRUE")
        elif name in _LITERALS:
            stack.append(arg)
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = tuple(stack[-n:])
            del stack[-n:]
            stack.append(items)
        elif name == "TUPLE":
            stack.append(tuple(self.pop_mark()))
        elif name in ("LIST", "FROZENSET"):
            stack.append(self.pop_mark())
        elif name == "DICT":
            items = self.pop_mark()
            stack.append({_key(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)})
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(self.memo.get(arg))
        elif name == "GLOBAL":
            module, _, attr = str(arg).partition(" ")
            stack.append(_global(module, attr))
        elif name == "STACK_GLOBAL":
            attr, module = stack.pop(), stack.pop()
            stack.append(_global(str(module), str(attr)))
        elif name in ("BINPERSID", "PERSID"):
            if name == "BINPERSID":
                stack.pop()
            stack.append({"__class__": "persistent_id"})
        elif name in ("EXT1", "EXT2", "EXT4"):
            stack.append({"__class__": f"extension.{arg}"})
        elif name in ("NEXT_BUFFER", "READONLY_BUFFER"):
            stack.append(None)
        else:
            return False
        return True

    def _fill(self, name: str, arg: Any) -> bool:
        """Opcodes that fill the container on top, memoize, or drop and copy stack items."""
        stack = self.stack
        if name == "APPEND":
            value = stack.pop()
            if isinstance(stack[-1], list):
                stack[-1].append(value)
        elif name in ("APPENDS", "ADDITEMS"):
            items = self.pop_mark()
            if isinstance(stack[-1], list):
                stack[-1].extend(items)
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            if isinstance(stack[-1], dict):
                stack[-1][_key(key)] = value
        elif name == "SETITEMS":
            items = self.pop_mark()
            if isinstance(stack[-1], dict):
                for i in range(0, len(items) - 1, 2):
                    stack[-1][_key(items[i])] = items[i + 1]
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            self.memo[arg] = stack[-1]
        elif name == "MEMOIZE":
            self.memo[len(self.memo)] = stack[-1]
        elif name == "BUILD":
            state = stack.pop()
            target = stack[-1]
            if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
                state = {**(state[0] or {}), **(state[1] or {})} \
                    if all(isinstance(s, dict) or s is None for s in state) else {}
            if isinstance(target, dict) and isinstance(state, dict):
                target.update({_key(k): v for k, v in state.items()})
        elif name == "POP":
            stack.pop()
        elif name == "POP_MARK":
            self.pop_mark()
        elif name == "DUP":
            stack.append(stack[-1])
        else:
            return False
        return True

    def _invoke(self, name: str, arg: Any) -> bool:
        """Opcodes that call or instantiate: recorded as data by :func:`_call`, never run."""
        stack = self.stack
        if name == "REDUCE":
            args, func = stack.pop(), stack.pop()
            stack.append(_call(func, args))
        elif name == "NEWOBJ":
            args, cls = stack.pop(), stack.pop()
            stack.append(_call(cls, args))
        elif name == "NEWOBJ_EX":
            kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
            stack.append(_call(cls, args, kwargs))
        elif name == "OBJ":
            items = self.pop_mark()
            stack.append(_call(items[0], tuple(items[1:])) if items else {})
        elif name == "INST":
            module, _, attr = str(arg).partition(" ")
            stack.append(_call(_global(module, attr), tuple(self.pop_mark())))
        else:
            return False
        return True


def _walk(data: bytes) -> Any:
    """Run the pickle's opcodes on a :class:`_Machine`; return the object left on top."""
    machine = _Machine()
    try:
        for count, (op, arg, _) in enumerate(pickletools.genops(io.BytesIO(data)), 1):
            if count > _MAX_OPS:
                raise PickleReadError("too many opcodes")
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                break
            machine.step(name, arg)
    except (ValueError, IndexError, KeyError, TypeError, RecursionError) as exc:
        if isinstance(exc, PickleReadError):
            raise
        raise PickleReadError(f"not a readable pickle ({type(exc).__name__})") from None
    if not machine.stack:
        raise PickleReadError("empty pickle")
    return machine.stack[-1]


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
