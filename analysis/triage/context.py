"""Facts about one jit function that several triage rules share, computed once per function.

Everything here is syntactic and local to the function: which names hold tensors (derived from `tl.arange` and
friends), which names hold values read by `tl.load`, which names are pointers derived from which parameter, which
loops enclose a node. It is deliberately conservative: when unsure whether a name is a tensor, it is one.

`KernelContext` holds the function's nodes, calls, loops and bindings (reaching definitions by position); its
facts come from three parts: `context_dataflow` (blocks, loaded values, indices, program ids),
`context_pointers` (address expressions, pointer roots, integer parameters) and `context_values` (literal
values given to parameters, arange sizes). The names rules look for are in `context_names`.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..core.findings import Span
from ..kernels import KernelInfo, LaunchSite, ModuleInfo, Param
from .context_dataflow import DataflowFacts
from .context_names import LOOP_ITERATORS, assigned_in, names_in
from .context_pointers import PointerFacts
from .context_values import ValueFacts


@dataclass
class KernelContext(DataflowFacts, PointerFacts, ValueFacts):
    module: ModuleInfo
    kernel: KernelInfo
    path: str
    _parents: dict[int, ast.AST] = field(default_factory=dict)
    calls: list[tuple[ast.Call, str]] = field(default_factory=list)  # (call, canonical name), source order
    all_calls: list[ast.Call] = field(default_factory=list)  # every call, including `x.to(...)` methods
    loops: list[ast.For] = field(default_factory=list)
    assigns: dict[str, list[ast.AST]] = field(
        default_factory=dict
    )  # name -> assigned values (for loops: iter)
    # name -> [(line, col, value)] for every binding, to find the one that reaches a use
    assign_sites: dict[str, list[tuple[int, int, ast.AST]]] = field(default_factory=dict)
    increments: set[int] = field(default_factory=set)  # ids of `x += value` values (a step, not a base)

    def __post_init__(self) -> None:
        # Every node of the function, parents before children (operator/context singletons left out).
        self.tree = self.module.function_tree(self.kernel)
        self.nodes: list[ast.AST] = self.tree.nodes
        self._parents = self.tree.parents
        for child in self.nodes:
            if isinstance(child, ast.Call):
                self.all_calls.append(child)
                name = self.module.resolve(child.func)
                if name is not None:
                    self.calls.append((child, name))
            elif isinstance(child, ast.For):
                self.loops.append(child)
                for target in names_in(child.target):
                    self._assign(target, child, child.iter)
            elif isinstance(child, ast.Assign):
                for target in child.targets:
                    for name in names_in(target):
                        self._assign(name, child, child.value)
            elif isinstance(child, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and child.value is not None:
                if isinstance(child, ast.AugAssign):
                    self.increments.add(id(child.value))
                for name in names_in(child.target):
                    self._assign(name, child, child.value)
        self.calls.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        self.loops.sort(key=lambda loop: (loop.lineno, loop.col_offset))

    def _assign(self, name: str, stmt: ast.AST, value: ast.AST) -> None:
        self.assigns.setdefault(name, []).append(value)
        # A loop binds its target before the body runs; an assignment binds after its value is computed, so
        # `x = f(x)` reads the previous `x` (the binding is placed at the statement's end).
        if isinstance(stmt, ast.For):
            where = (stmt.lineno, stmt.col_offset)
        else:
            where = (
                getattr(stmt, "end_lineno", None) or stmt.lineno,
                getattr(stmt, "end_col_offset", None) or 0,
            )
        self.assign_sites.setdefault(name, []).append((*where, value))

    def reaching(self, name: str, use: ast.AST) -> list[ast.AST]:
        """Values of `name` that reach `use`, approximated by position: the last assignment written before it
        (all assignments when none precedes, e.g. a use at the top of a loop that assigns later)."""
        sites, positions = self._sorted_sites(name)
        where = (getattr(use, "lineno", 0), getattr(use, "col_offset", 0))
        before = bisect.bisect_left(positions, where)  # sites written before the use
        if before:
            return [sites[before - 1][2]]
        # `x = f(x)` with no earlier binding reads the parameter, not its own result
        return [value for _, _, value in sites if not _contains(value, where)]

    def _sorted_sites(self, name: str) -> tuple[list[tuple[int, int, ast.AST]], list[tuple[int, int]]]:
        """`name`'s bindings by position (stable: equal positions keep their order) and their positions, sorted
        once per name: rules ask for reaching values tens of thousands of times per file."""
        hit = self._sites_by_position.get(name)
        if hit is None:
            sites = sorted(self.assign_sites.get(name, ()), key=lambda s: (s[0], s[1]))
            hit = self._sites_by_position[name] = (sites, [(line, col) for line, col, _ in sites])
        return hit

    @cached_property
    def _sites_by_position(self) -> dict[str, tuple[list[tuple[int, int, ast.AST]], list[tuple[int, int]]]]:
        return {}

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`ast.walk(node)` as a cached list (rules walk the same small subtrees many times)."""
        return self.tree.walk(node)

    def names_of(self, node: ast.AST) -> frozenset[str]:
        """Every Name read or written inside `node` (cached)."""
        cached = self._names.get(id(node))
        if cached is None:
            cached = frozenset(n.id for n in self.walk(node) if isinstance(n, ast.Name))
            self._names[id(node)] = cached
        return cached

    def assigned_in(self, node: ast.AST) -> set[str]:
        """Names (re)bound anywhere inside `node` (cached)."""
        cached = self._assigned.get(id(node))
        if cached is None:
            cached = assigned_in(node)
            self._assigned[id(node)] = cached
        return cached

    @cached_property
    def _assigned(self) -> dict[int, set[str]]:
        return {}

    @cached_property
    def memo(self) -> dict[str, Any]:
        """Scratch space for rules that share a derived fact (computed once per function)."""
        return {}

    @cached_property
    def _names(self) -> dict[int, frozenset[str]]:
        return {}

    @cached_property
    def _users(self) -> dict[str, set[str]]:
        """Reverse data-flow graph: name -> names whose assigned values read it."""
        users: dict[str, set[str]] = {}
        for name, values in self.assigns.items():
            for value in values:
                for ref in self.names_of(value):
                    users.setdefault(ref, set()).add(name)
        return users

    def _propagate(self, roots: set[str], graph: dict[str, set[str]]) -> set[str]:
        out = set(roots)
        stack = list(roots)
        while stack:
            for user in graph.get(stack.pop(), ()):
                if user not in out:
                    out.add(user)
                    stack.append(user)
        return out

    # -- generic helpers --------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.kernel.name

    def span(self, node: ast.AST) -> Span:
        return self.module.span_of(node)

    def text(self, node: ast.AST) -> str:
        return self.module.text_of(node)

    def resolve(self, node: ast.AST) -> str | None:
        return self.module.resolve(node)

    def calls_to(self, *names: str) -> Iterator[ast.Call]:
        wanted = set(names)
        return (call for call, name in self.calls if name in wanted)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def enclosing_loops(self, node: ast.AST) -> list[ast.For]:
        """Loops around `node`, innermost first (only the loop body counts, not its header)."""
        out: list[ast.For] = []
        child = node
        current = self.parent(node)
        while current is not None and current is not self.kernel.node:
            if isinstance(current, ast.For) and child is not current.iter and child is not current.target:
                out.append(current)
            child = current
            current = self.parent(current)
        return out

    def is_range_loop(self, loop: ast.For) -> bool:
        if not isinstance(loop.iter, ast.Call):
            return False
        func = loop.iter.func
        # builtins are not in the import aliases: a bare `range` resolves to None
        name = self.resolve(func) or (func.id if isinstance(func, ast.Name) else None)
        return name in LOOP_ITERATORS

    @cached_property
    def params(self) -> dict[str, Param]:
        return {p.name: p for p in self.kernel.params}

    @cached_property
    def launches(self) -> list[LaunchSite]:
        return self.module.launches_of(self.kernel.name)

    # -- data flow --------------------------------------------------------------------------------------------

    # -- known values of constexpr parameters -----------------------------------------------------------------


def _contains(node: ast.AST, where: tuple[int, int]) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    return start <= where < end
