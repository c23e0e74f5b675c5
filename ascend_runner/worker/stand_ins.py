"""Stand-ins for modules a kernel file imports that this runner environment does not have at all.

To compile a kernel, the runner executes its file; a file that imports `yaml`, `flash_attn_2_cuda`, `vllm` or
(in the triton-ascend environment) `torch` would stop there, although the kernel itself needs none of them. While
the file loads, a finder placed *last* on `sys.meta_path` answers only for top-level modules no other finder
found (and for submodules of those), unless the import sits in a `try` that handles its failure (a conditional
import keeps deciding on the real outcome): it binds a stand-in whose attributes, calls, subscripts and base classes are
all stand-ins, so module-level code runs on and the kernels below compile. Every stand-in is reported (the
caller turns it into a TL004 note on the import line); a kernel that really uses one fails to compile with the
compiler's own message. Stdlib only.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class StandIn:
    """Any value of a missing module: every operation gives another stand-in, so setup code runs on."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> StandIn:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"{self._name}.{attr}")

    def __setattr__(self, attr: str, value: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # used as a decorator (`@missing.decorator` / `@missing.decorator(...)`): keep the function itself
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], StandIn):
            return args[0]
        return StandIn(f"{self._name}()")

    def __getitem__(self, key: Any) -> StandIn:
        return StandIn(f"{self._name}[]")

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)  # `class Model(torch.nn.Module)` still defines a class

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<stand-in for {self._name}>"


_GUARDS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
_trees: dict[str, ast.Module | None] = {}


_WORKER = os.path.dirname(os.path.abspath(__file__))


def _guarded_import() -> bool:
    """Whether a caller of the import being resolved handles its failure: some frame of the user's code on the
    stack sits in a `try` whose handlers catch ImportError (or Exception, or all). The walk stops at the worker's
    own frames (its statement loop catches everything, and that must not count)."""
    frame = sys._getframe(2)
    depth = 0
    while frame is not None and depth < 24:
        filename = frame.f_code.co_filename
        if os.path.dirname(os.path.abspath(filename)) == _WORKER:
            return False
        if not filename.startswith("<frozen") and "importlib" not in filename:
            depth += 1
            if _inside_handled_try(filename, frame.f_lineno):
                return True
        frame = frame.f_back
    return False


def _inside_handled_try(filename: str, line: int) -> bool:
    if filename not in _trees:
        try:
            _trees[filename] = ast.parse("".join(linecache.getlines(filename)))
        except (SyntaxError, ValueError):
            _trees[filename] = None
    tree = _trees[filename]
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not node.body:
            continue
        if not node.body[0].lineno <= line <= (node.body[-1].end_lineno or node.body[-1].lineno):
            continue
        for handler in node.handlers:
            names = [handler.type] if not isinstance(handler.type, ast.Tuple) else list(handler.type.elts)
            if handler.type is None or any(ast.unparse(n).split(".")[-1] in _GUARDS for n in names if n):
                return True
    return False


# Names a library re-exports from Triton (`from vllm.triton_utils import tl, triton`): a missing re-exporting
# module still hands out the real Triton, so the kernels written against it compile.
_TRITON_REEXPORTS = {"triton": "triton", "tl": "triton.language", "tldevice": "triton.language.extra.libdevice"}
# ...and the flag it sets when Triton imports (`from vllm.triton_utils import HAS_TRITON`): true where it does.
_TRITON_FLAGS = frozenset({"HAS_TRITON"})


_MARK = "__tritonlens_stand_in__"


def _stand_in_module(name: str) -> types.ModuleType:
    """A plain module (Triton accepts a global only when `type(val) is ModuleType`, as a real `torch` is) whose
    missing attributes are stand-ins, through a module-level __getattr__ (PEP 562)."""
    module = types.ModuleType(name)

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if attr in _TRITON_FLAGS:
            return importlib.util.find_spec("triton") is not None
        if attr in _TRITON_REEXPORTS:
            try:
                return importlib.import_module(_TRITON_REEXPORTS[attr])
            except ImportError:
                pass
        return StandIn(f"{name}.{attr}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    setattr(module, _MARK, True)
    return module


def _is_stand_in(module: Any) -> bool:
    return isinstance(module, types.ModuleType) and module.__dict__.get(_MARK) is True


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self.stood_in: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top = fullname.split(".")[0]
        parent = sys.modules.get(fullname.rpartition(".")[0]) if "." in fullname else None
        if "." in fullname and not _is_stand_in(parent):
            return None  # a missing submodule of a real package is a real error
        if top in ("triton", "tritonlens") or top.startswith("tritonlens_"):
            return None
        if "." not in fullname and _guarded_import():
            return None  # `try: import torch_npu except ImportError:` decides on the failure: let it fail
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _stand_in_module(spec.name)
        module.__path__ = []
        if "." not in spec.name:
            self.stood_in.append(spec.name)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


@contextmanager
def standing_in() -> Iterator[list[str]]:
    """For the block: missing top-level modules import as stand-ins; yields the names stood in for."""
    finder = _Finder()
    sys.meta_path.append(finder)
    try:
        yield finder.stood_in
    finally:
        sys.meta_path.remove(finder)
        _trees.clear()
        for name in [n for n, m in sys.modules.items() if _is_stand_in(m)]:
            sys.modules.pop(name, None)  # the next job looks again (the environment may have changed)
