"""Names a package's `__init__` re-exports, bound lazily on a package entered without running that `__init__`.

A workspace package whose `__init__` cannot run here (it imports a module that fails under this Triton, probes a
device) is stood in for by a bare package over the same folder. Kernel files still write `language.math.gelu(x)`
or `language.eps`, names that exist only because the `__init__` says `from . import math` or
`from .constant import *`. This reads the `__init__`'s import statements (never runs the file) and, on first
access to a missing attribute, imports only the submodule that binds it. Stdlib only (runs in each runner
environment).
"""

from __future__ import annotations

import ast
import importlib
import os
import types
from typing import Any


def _relative_sources(init_path: str) -> list[tuple[str, str | None, str | None]]:
    """(submodule, name it exports or None for `*` / the submodule itself, bound name), in file order, for the
    `__init__`'s top-level `from . import x` and `from .x import y` statements."""
    try:
        with open(init_path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=init_path)
    except (OSError, SyntaxError, ValueError):
        return []
    out: list[tuple[str, str | None, str | None]] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.ImportFrom) or stmt.level != 1:
            continue
        for alias in stmt.names:
            if stmt.module is None:  # from . import math [as m]: the submodule itself
                out.append((alias.name, None, alias.asname or alias.name))
            elif alias.name == "*":
                out.append((stmt.module, None, None))
            else:
                out.append((stmt.module, alias.name, alias.asname or alias.name))
    return out


def bind_reexports(package: types.ModuleType, init_path: str) -> None:
    """Give a bare package a module-level `__getattr__` (PEP 562) that resolves what its `__init__` would have
    bound, then a submodule of that name; anything else raises AttributeError as usual."""
    sources = _relative_sources(init_path) if os.path.isfile(init_path) else []
    resolving: set[str] = set()
    name = package.__name__

    def lookup(attr: str) -> Any:
        # The last binding wins in Python; walk the statements backwards.
        for sub, exported, bound in reversed(sources):
            if bound is not None and bound != attr:
                continue
            try:
                module = importlib.import_module(f"{name}.{sub}")
            except Exception:  # noqa: BLE001 - that submodule cannot load here either: try the next source
                continue
            if exported is None and bound == attr:
                return module
            value = module.__dict__.get(exported or attr, _MISSING)
            if value is not _MISSING and (exported is not None or _star_exports(module, attr)):
                return value
        try:
            return importlib.import_module(f"{name}.{attr}")  # a submodule never named by the __init__
        except ImportError:
            pass
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__") or attr in resolving:
            raise AttributeError(attr)
        resolving.add(attr)  # importing a submodule may look the same name up on this package again
        try:
            value = lookup(attr)
        finally:
            resolving.discard(attr)
        setattr(package, attr, value)
        return value

    package.__getattr__ = __getattr__  # type: ignore[method-assign]


_MISSING = object()


def _star_exports(module: types.ModuleType, attr: str) -> bool:
    """Whether `from module import *` binds `attr` (its `__all__`, else every public name)."""
    names = module.__dict__.get("__all__")
    return attr in names if names is not None else not attr.startswith("_")
