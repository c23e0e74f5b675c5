"""Launch sites `kernel[grid](args...)`: found only on lines where `name[` appears, with the grid (literal or a
name assigned once in the same scope) and each argument's text, span and literal value. A local name bound once to
a kernel or a choice of kernels (`fn = a if c else b`) launches each of them (`through`, `shared_by`).

`LaunchFinder` is a part of the collector (collection.py): it reads `source`, `lines`, `chunks`, `tree` and the
statement lists the collector caches per chunk."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..source.chunks import Chunk
from ..source.lines import SourceText
from .expressions import grid_literal, literal
from .model import LaunchArg, LaunchSite
from .nodes import Entry, header_nodes, single_assignments

# `word[` (spaces allowed before the bracket), its word captured: the names are checked in a set, not in a pattern
# of all kernel names compiled per parse (~6 ms for the 176 names of a 2,000-line file, whose names differ from
# the last file's, so re's cache never answered). The word matched is whole: a shorter prefix of it is followed by
# a word character, never by the bracket.
_NAME_BRACKET = re.compile(r"\b([^\W\d]\w*)\s*\[")
# `name = a` or `name = a if cond else b` on one line: a local name for one of several kernels (checked in the AST)
_ALIAS = re.compile(r"^[ \t]*([^\W\d]\w*)[ \t]*=[ \t]*([^\W\d]\w*)(?:[ \t]+if\b.*\belse[ \t]+([^\W\d]\w*))?[ \t]*(?:#.*)?$", re.M)
_NAME_BRACKET_IN_LINE = re.compile(r"\b([^\W\d]\w*)[^\S\n]*\[")


class LaunchFinder:
    """The collector's launch-site search (mixed into collection.Collector)."""

    source: str
    tree: ast.Module
    lines: SourceText
    chunks: list[Chunk]
    scope_assigns: dict[int, dict[str, ast.AST]]
    _subtree: Callable[[ast.stmt, Chunk], list[Entry]]

    def _hit_lines(self, names: set[str], names_key: frozenset[str]) -> list[int]:
        """Lines (1-based, ascending) where `name[` appears for one of `names`."""
        if "\r" in self.source:
            return [
                i
                for i, text in enumerate(self.lines.lines, start=1)
                if any(m.group(1) in names for m in _NAME_BRACKET.finditer(text))
            ]
        # Without CR the chunks cover the lines one after the other: search each chunk's lines once per set
        # of names (a search over a chunk's text finds the lines a search per line finds: the pattern never
        # matches a line break between the name and the bracket, whose lines `\n` separates).
        out: list[int] = []
        lines = self.lines.lines
        for chunk in self.chunks:
            cached = chunk.memo.get(("hit_lines",))
            if cached is None or cached[0] != names_key:
                text = "\n".join(lines[chunk.start : chunk.end])
                found: list[int] = []
                line, pos = chunk.start + 1, 0
                for match in _NAME_BRACKET_IN_LINE.finditer(text):
                    if match.group(1) not in names:
                        continue
                    line += text.count("\n", pos, match.start())
                    pos = match.start()
                    if not found or found[-1] != line:
                        found.append(line)
                cached = (names_key, found)
                chunk.memo[("hit_lines",)] = cached
            out.extend(cached[1])
        return out

    def alias_names(self, kernels: set[str]) -> set[str]:
        """Names a line binds to one kernel or a choice between kernels (`fn = a if c else b`): launched by them,
        those kernels are launched. A text scan, cached per chunk (like `_hit_lines`); `_expand` checks each
        in its scope."""
        if "\r" in self.source:
            found = [m.groups() for m in _ALIAS.finditer(self.source)]
        else:
            found = []
            for chunk in self.chunks:
                cached = chunk.memo.get(("alias_lines",))
                if cached is None:  # the bindings a chunk's text holds do not depend on the kernels' names
                    text = "\n".join(self.lines.lines[chunk.start : chunk.end])
                    cached = tuple(m.groups() for m in _ALIAS.finditer(text))
                    chunk.memo[("alias_lines",)] = cached
                found.extend(cached)
        return {name for name, first, other in found
                if first in kernels and (other is None or other in kernels) and name not in kernels}

    def _expand(self, site: LaunchSite, scope_node: ast.AST, kernels: set[str]) -> list[LaunchSite]:
        """The site for each kernel an alias launched here may be (none when the alias is not one here)."""
        if site.kernel in kernels:
            return [site]
        chosen = _kernel_choice(self._scope_assignments(scope_node).get(site.kernel), kernels)
        return [replace(site, kernel=k, through=site.kernel, shared_by=tuple(chosen)) for k in chosen]

    def _launches(
        self, tops: list[tuple[ast.stmt, Chunk]], names: set[str], names_key: frozenset[str],
        kernels: set[str] | None = None,
    ) -> list[LaunchSite]:
        """Launch sites `name[grid](...)`, looking only at statements on lines where `name[` appears; `names`
        may hold aliases of `kernels` (every name is a kernel when None)."""
        kernels = names if kernels is None else kernels
        hit_lines = self._hit_lines(names, names_key)
        if not hit_lines:
            return []

        def hit(first: int, last: int) -> bool:
            index = bisect.bisect_left(hit_lines, first)
            return index < len(hit_lines) and hit_lines[index] <= last

        found: dict[tuple[int, str], LaunchSite] = {}
        for top, chunk in tops:
            first = top.lineno
            if not hit(first, top.end_lineno or first):
                continue  # nothing under this statement is on a hit line
            entries: list[Entry] = [(top, "", None, None), *self._subtree(top, chunk)]
            for stmt, _, scope, scope_node in entries:
                first = getattr(stmt, "lineno", 0)
                last = getattr(stmt, "end_lineno", first) or first
                if not hit(first, last):
                    continue
                for node in self._subscript_calls(stmt, chunk):
                    site = self._launch_cached(node, scope, scope_node, names, chunk)
                    if site is None:
                        continue
                    for each in self._expand(site, scope_node or self.tree, kernels):
                        found.setdefault((id(node), each.kernel), each)
        return sorted(found.values(), key=lambda site: (site.span.line, site.span.col, site.kernel))

    @staticmethod
    def _subscript_calls(stmt: ast.AST, chunk: Chunk) -> list[ast.Call]:
        """Calls of the form `x[...](...)` in a statement's header, in walk order (cached)."""
        key = ("subscript_calls", id(stmt))
        cached = chunk.memo.get(key)
        if cached is None:
            cached = [
                node
                for node in header_nodes(stmt)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
            ]
            chunk.memo[key] = cached
        return cached

    def _launch_cached(
        self, call: ast.Call, scope: str | None, scope_node: ast.AST | None, names: set[str], chunk: Chunk
    ) -> LaunchSite | None:
        if scope_node is None:
            # At module level a grid name may be assigned in another chunk: not cacheable.
            return self._launch(call, scope, self.tree, names)
        # Inside a function everything a launch reads is in this chunk.
        key = ("launch", id(call))
        if key not in chunk.memo:
            chunk.memo[key] = self._launch(call, scope, scope_node, None)
        site = chunk.memo[key]
        return site if site is not None and site.kernel in names else None

    def _launch(
        self, call: ast.Call, scope: str | None, scope_node: ast.AST, names: set[str] | None
    ) -> LaunchSite | None:
        """The launch site of `call` when it launches one of `names` (any name when None)."""
        sub = call.func
        assert isinstance(sub, ast.Subscript)
        target = sub.value
        kernel = (
            target.id
            if isinstance(target, ast.Name)
            else target.attr
            if isinstance(target, ast.Attribute)
            else None
        )
        if kernel is None or (names is not None and kernel not in names):
            return None
        grid = sub.slice
        grid_value = grid_literal(grid)
        resolved_text: str | None = None
        resolved_value: tuple[Any, ...] | None = None
        if isinstance(grid, ast.Name):
            assigned = self._scope_assignments(scope_node).get(grid.id)
            if assigned is not None:
                resolved_text = self.lines.text(assigned)
                resolved_value = grid_literal(assigned)
        args = tuple(self._arg(None, a) for a in call.args)
        kwargs = tuple(self._arg(kw.arg, kw.value, starred=kw.arg is None) for kw in call.keywords)
        return LaunchSite(
            kernel=kernel,
            span=self.lines.span(call),
            grid_text=self.lines.text(grid),
            grid_span=self.lines.span(grid),
            grid_value=grid_value,
            grid_resolved_text=resolved_text,
            grid_resolved_value=resolved_value,
            args=args,
            kwargs=kwargs,
            function=scope,
            node=call,
        )

    def _scope_assignments(self, scope: ast.AST) -> dict[str, ast.AST]:
        """Names the scope (not its nested defs) assigns exactly once, with their value (cached per scope)."""
        cached = self.scope_assigns.get(id(scope))
        if cached is None:
            cached = single_assignments(scope)
            self.scope_assigns[id(scope)] = cached
        return cached

    def _arg(self, name: str | None, node: ast.AST, starred: bool = False) -> LaunchArg:
        is_starred = starred or isinstance(node, ast.Starred)
        ok, value = literal(node) if not is_starred else (False, None)
        span = self.lines.span(node)
        text = self.lines.text(node)
        if starred:
            text = f"**{text}"
        return LaunchArg(name=name, text=text, has_literal=ok, value=value, span=span, starred=is_starred)


def _kernel_choice(value: ast.AST | None, kernels: set[str]) -> list[str]:
    """The kernels `a` or `a if c else b` (nested) names, in order; [] when any branch is something else."""
    if isinstance(value, ast.Name):
        return [value.id] if value.id in kernels else []
    if isinstance(value, ast.IfExp):
        body, orelse = _kernel_choice(value.body, kernels), _kernel_choice(value.orelse, kernels)
        return list(dict.fromkeys(body + orelse)) if body and orelse else []
    return []
