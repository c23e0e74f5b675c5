"""Build a kernel from its file's own source when the file cannot be imported as a module of its package.

Kernel libraries often probe a device, a vendor backend (`triton.backends.mlu`) or a vendor module when their
package `__init__` runs, so on a runner without that hardware the file never defines its kernels. A kernel
engineer still expects the compiler's view of the kernel, so the worker retries with the file's source alone:

- only the top-level statements the kernel needs run (its own `def`, the @triton.jit helpers it calls, the
  module-level constants and imports they use, transitively), in file order;
- packages of the workspace are entered without running their `__init__` (bare packages over the same
  folders), so `from pkg.utils import triton_lang_extension as tle` loads that one file;
- decorators that are not Triton's (`@libentry()`, a vendor autotuner) are dropped, and said so.

The result is labeled by the caller ("analyzed from the file's source alone"); a name the kernel needs that
still cannot be bound is a warning on its line. Stdlib only (runs inside each runner environment).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from init_reexports import bind_reexports


@dataclass
class AlonePlan:
    statements: list[
        ast.stmt
    ]  # the statements to run, in file order (kernel defs with Triton decorators only)
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (line, decorator text) not applied
    skipped: int = 0  # top-level statements the kernel does not need


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def _used_names(node: ast.AST) -> set[str]:
    """Names a statement reads from the module: for a function, those it neither assigns nor takes."""
    loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return loads
    local = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    local |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    outer = set().union(*(_used_names(d) for d in node.decorator_list)) if node.decorator_list else set()
    for a in ast.walk(node.args):  # annotations and defaults are read from the module
        if isinstance(a, ast.expr):
            outer |= {n.id for n in ast.walk(a) if isinstance(n, ast.Name)}
    return (loads - local) | outer


def _triton_names(tree: ast.Module) -> set[str]:
    """Names bound by imports from the triton package (`triton`, `tl`, `jit`, `autotune`, ...)."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            out |= {
                (a.asname or a.name).split(".")[0] for a in stmt.names if a.name.split(".")[0] == "triton"
            }
        elif (
            isinstance(stmt, ast.ImportFrom)
            and (stmt.module or "").split(".")[0] == "triton"
            and not stmt.level
        ):
            out |= {a.asname or a.name for a in stmt.names}
    return out


def _root(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Call, ast.Attribute, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _is_jit(expr: ast.expr) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    return (isinstance(target, ast.Name) and target.id == "jit") or (
        isinstance(target, ast.Attribute) and target.attr == "jit"
    )


def _has_jit_def(stmts: list[ast.stmt], kernel: str | None = None) -> bool:
    """Whether these statements define a jit function (`kernel` itself when given), at any depth."""
    return any(
        isinstance(n, ast.FunctionDef)
        and (n.name == kernel if kernel else any(_is_jit(d) for d in n.decorator_list))
        for s in stmts
        for n in ast.walk(s)
    )


def _kernel_side(stmt: ast.stmt, kernel: str) -> list[ast.stmt] | None:
    """For a module-level `if`/`try` that defines jit functions: the statements of its Triton side (the branch
    that defines `kernel`, else the first branch that defines a jit function; a `try` body with its `else` and
    `finally`); None for any other statement, which runs as written."""
    if isinstance(stmt, ast.If):
        branches = [stmt.body, stmt.orelse]
    elif isinstance(stmt, ast.Try):
        branches = [[*stmt.body, *stmt.orelse, *stmt.finalbody], *(h.body for h in stmt.handlers)]
    else:
        return None
    for wanted in (kernel, None):
        chosen = next((b for b in branches if _has_jit_def(b, wanted)), None)
        if chosen is not None:
            return chosen
    return None


def flatten_guards(body: list[ast.stmt], kernel: str) -> list[ast.stmt]:
    """Module-level `if has_triton():` / `try:` blocks that define kernels, replaced by their Triton side, so
    those kernels and the helpers beside them are defined whatever the guard says on this runner."""
    out: list[ast.stmt] = []
    for stmt in body:
        side = _kernel_side(stmt, kernel)
        if side is None:
            out.append(stmt)
        else:
            out.extend(flatten_guards(side, kernel))
    return out


def guard_of(tree: ast.Module, kernel: str) -> ast.stmt | None:
    """The module-level `if`/`try` statement under which `kernel` is defined; None for a top-level def."""
    return next(
        (s for s in tree.body if isinstance(s, (ast.If, ast.Try)) and _has_jit_def([s], kernel)), None
    )


def guard_text(stmt: ast.stmt) -> str:
    """`if has_triton():` / `try:` with its line, for the label of a compile built past the guard."""
    head = f"if {ast.unparse(stmt.test)}:" if isinstance(stmt, ast.If) else "try:"
    return f"`{head}` (line {stmt.lineno})"


def plan_alone(tree: ast.Module, kernel: str) -> AlonePlan | None:
    """The statements that define `kernel` from the file's own source; None when it is no top-level def (or
    one under a module-level `if`/`try`, whose Triton side is then taken)."""
    body = flatten_guards(list(tree.body), kernel)
    defs = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
    if kernel not in defs:  # a kernel defined inside a function (a test): defined again at module level
        nested = next(
            (
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.FunctionDef) and n.name == kernel and n not in body
            ),
            None,
        )
        if nested is None:
            return None
        body.append(nested)
        defs[kernel] = nested
    triton_names = _triton_names(tree)
    binders: dict[str, list[int]] = {}
    for i, stmt in enumerate(body):
        for name in _bound_names(stmt):
            binders.setdefault(name, []).append(i)
    rewritten: dict[int, ast.stmt] = {}
    dropped: list[tuple[int, str]] = []
    needed: set[int] = set()
    todo = [body.index(defs[kernel])]
    while todo:
        i = todo.pop()
        if i in needed:
            continue
        needed.add(i)
        stmt = body[i]
        if isinstance(stmt, ast.FunctionDef) and any(_is_jit(d) for d in stmt.decorator_list):
            # a jit function keeps its jit decorator only: Triton's wrappers (autotune, heuristics) do not
            # change the compiled code, and a vendor's wrapper needs what could not be imported
            keep = [d for d in stmt.decorator_list if _is_jit(d)]
            for d in stmt.decorator_list:
                if not _is_jit(d) and _root(d) not in triton_names:
                    dropped.append((d.lineno, ast.unparse(d)))
            stmt = ast.FunctionDef(**{**{f: getattr(stmt, f) for f in stmt._fields}, "decorator_list": keep})
            ast.copy_location(stmt, body[i])
            rewritten[i] = stmt
        for name in _used_names(stmt):
            todo.extend(j for j in binders.get(name, ()) if j not in needed)
    order = sorted(needed)
    return AlonePlan(
        statements=[rewritten.get(i, body[i]) for i in order],
        dropped=sorted(dropped),
        skipped=len(body) - len(order),
    )


class _BareLoader(importlib.abc.Loader):
    """A package of the workspace entered without running its `__init__`; the names that `__init__` re-exports
    from its own submodules (`from . import math`, `from .constant import *`) resolve on first use."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        bind_reexports(module, module.__spec__.origin or "")


class _TolerantLoader(importlib.abc.Loader):
    """A module of the workspace run statement by statement: one that fails (a device probe) is skipped, so
    the @triton.jit helpers and constants below it are still defined."""

    def __init__(self, path: str, failures: list[str]) -> None:
        self.path = path
        self.failures = failures

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        with open(self.path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=self.path)
        for stmt in tree.body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), self.path, "exec")
            try:
                exec(code, module.__dict__)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - skipped and counted, as for the file itself
                self.failures.append(f"{os.path.basename(self.path)}:{stmt.lineno}: {type(exc).__name__}")


class _BarePackages(importlib.abc.MetaPathFinder):
    def __init__(self, roots: list[str], installed: Any) -> None:
        self.roots = tuple(os.path.realpath(r) + os.sep for r in roots)
        self.installed = installed
        self.failures: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None) or ""
        if spec is None or not origin.endswith(".py"):
            return None
        if not os.path.realpath(origin).startswith(self.roots) or self.installed(origin):
            return None
        if not spec.submodule_search_locations:
            tolerant = importlib.machinery.ModuleSpec(
                fullname, _TolerantLoader(origin, self.failures), origin=origin
            )
            tolerant.has_location = True
            return tolerant
        bare = importlib.machinery.ModuleSpec(fullname, _BareLoader(), origin=origin, is_package=True)
        bare.submodule_search_locations = list(spec.submodule_search_locations)
        bare.has_location = True
        return bare


@contextmanager
def bare_packages(roots: list[str], installed: Any) -> Iterator[None]:
    """While active, importing a package under `roots` (not an installed one) skips its `__init__`."""
    finder = _BarePackages(roots, installed)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


def describe(plan: AlonePlan, reason: str) -> dict[str, Any]:
    """What the caller shows with every finding of such a compile."""
    return {
        "reason": reason,
        "dropped_decorators": [f"@{text} (line {line})" for line, text in plan.dropped],
        "skipped_statements": plan.skipped,
    }
