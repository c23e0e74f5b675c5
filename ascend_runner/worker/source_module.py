"""Turn the text of an editor buffer into a live module so its @triton.jit kernels can be compiled.

Runs inside a runner environment (stdlib + that environment's packages; never imports tritonlens).
The buffer runs under a private module name, so `if __name__ == "__main__":` blocks never execute, and
its code objects carry the request's path as file name, so every compiler `loc` points at the user's file.
Top-level statements run one by one: one that fails (say, a device query on a machine with no GPU) is
reported as a warning and skipped, so the kernels below it can still be compiled.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import itertools
import linecache
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any

# Packages that are slow to import and rarely needed to *compile* a kernel: bound lazily, imported for real
# on first attribute access (so a kernel file's top-level `import torch` costs nothing unless used).
LAZY_PACKAGES = ("torch",)
_counter = itertools.count()


class SourceError(Exception):
    """The buffer cannot yield the requested kernel; carries a 1-based line when one is known."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


@dataclass
class LoadedSource:
    module: types.ModuleType
    warnings: list[dict[str, Any]] = field(default_factory=list)  # {"line", "message"} per skipped statement
    local_modules: list[str] = field(default_factory=list)  # the user's own modules it imported

    def close(self) -> None:
        # Forget the buffer and the user's sibling modules, so the next job sees their current text.
        sys.modules.pop(self.module.__name__, None)
        if self.module.__package__:
            sys.modules.pop(self.module.__package__, None)
        for name in self.local_modules:
            sys.modules.pop(name, None)


class _LazyModule(types.ModuleType):
    """Stands for a package not imported yet; the first attribute looked up imports it for real."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def _lazy_bindings(stmt: ast.stmt) -> dict[str, types.ModuleType] | None:
    """For `import torch` / `import torch as th` of a lazy package not yet loaded: the names to bind."""
    if not isinstance(stmt, ast.Import):
        return None
    bound: dict[str, types.ModuleType] = {}
    for alias in stmt.names:
        if alias.name not in LAZY_PACKAGES or alias.name in sys.modules:
            return None
        bound[alias.asname or alias.name] = _LazyModule(alias.name)
    return bound


def _register_text(path: str, source: str) -> None:
    # inspect.getsourcelines (used by triton.jit) reads through linecache; an mtime of None keeps
    # checkcache() from replacing the buffer text with the (possibly stale or absent) file on disk.
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[path] = (len(source), None, lines, path)


def _folder_package(folder: str) -> str:
    """A private package whose search path is the buffer's folder, so `from .utils import helper` finds
    <folder>/utils.py as it would for the user; a private name cannot clash with an installed package."""
    name = f"tritonlens_folder_{next(_counter)}"
    package = types.ModuleType(name)
    package.__path__ = [folder]
    package.__package__ = name
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = [folder]
    sys.modules[name] = package
    return name


def load_source(source: str, path: str, folder: str | None = None) -> LoadedSource:
    """Execute `source` as a fresh module whose code claims to come from `path`.

    Its imports resolve in `folder` (a runner service's job folder holding the uploaded modules), else in the
    folder of `path`."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise SourceError(f"syntax error: {exc.msg}", exc.lineno, (exc.offset or 1) - 1) from None
    _register_text(path, source)
    name = f"tritonlens_buffer_{next(_counter)}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # dataclasses, inspect.getmodule and pickling look modules up here
    loaded = LoadedSource(module)
    folder = os.path.abspath(folder) if folder else os.path.dirname(os.path.abspath(path))
    added = os.path.isdir(folder) and folder not in sys.path
    if added:
        # Sibling imports (`from utils import helper`) resolve as they would for the user.
        sys.path.insert(0, folder)
    if os.path.isdir(folder):
        module.__package__ = _folder_package(folder)
    before = set(sys.modules)
    # No __pycache__ written into the user's folder by a compile.
    saved_bytecode_flag, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        for stmt in tree.body:
            lazy = _lazy_bindings(stmt)
            if lazy is not None:
                module.__dict__.update(lazy)
                continue
            code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
            try:
                exec(code, module.__dict__)
            except (Exception, SystemExit) as exc:
                loaded.warnings.append(
                    {
                        "line": stmt.lineno,
                        "message": f"top-level statement skipped: {type(exc).__name__}: {exc}",
                    }
                )
    finally:
        sys.dont_write_bytecode = saved_bytecode_flag
        if added:
            sys.path.remove(folder)
        for imported in set(sys.modules) - before:
            file = getattr(sys.modules.get(imported), "__file__", None) or ""
            if file.startswith(folder + os.sep):
                loaded.local_modules.append(imported)
    return loaded
