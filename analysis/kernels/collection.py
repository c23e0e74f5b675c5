"""Collecting one file's jit functions into a `ModuleInfo`: which defs are jit functions (decorators and call
forms), their parameters and spans, which jit functions call which (kernels vs helpers), and their launch sites.

What depends on one chunk of top-level statements only is kept in the chunk's memo (analysis.source_chunks), so
re-collecting an edited file recomputes the edited chunk only. Trees may be shared between parses: never mutate
them."""

from __future__ import annotations

import ast
import bisect
import re

from ..core.findings import Span
from ..source.chunks import Chunk
from ..source.lines import SourceText
from .decorators import DecoratorReader, Decorators
from .expressions import CONSTEXPR, add_import, literal, resolve_dotted
from .launch_sites import LaunchFinder
from .model import KernelInfo, ModuleInfo, Param
from .nodes import Entry, FunctionTree, top_entry, walk_statements

_CALLED_NAME = re.compile(r"(\w+) ?\(")
_DEF_NAME = re.compile(r"(?:async\s+)?def\s+")


def _is_interesting(node: ast.AST) -> bool:
    """Statements `build` looks at: imports and decorated defs."""
    return isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and bool(node.decorator_list)
    )


class Collector(DecoratorReader, LaunchFinder):
    """Builds a ModuleInfo. What depends on one chunk of top-level statements only (its statement list,
    parameters, helper calls, launches inside functions) is kept in the chunk's memo, so that re-parsing a
    file after an edit recomputes it for the edited chunk only (see analysis.source_chunks)."""

    def __init__(self, source: str, tree: ast.Module, lines: SourceText, chunks: list[Chunk]) -> None:
        self.source = source
        self.tree = tree
        self.lines = lines
        self.chunks = chunks
        self.aliases: dict[str, str] = {}
        self.trees: dict[int, FunctionTree] = {}
        self.scope_assigns: dict[int, dict[str, ast.AST]] = {}
        self.module_assigns: dict[str, ast.AST] = {}
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                self.module_assigns[stmt.targets[0].id] = stmt.value
        self.aliases_key: tuple[tuple[str, str], ...] = ()

    def resolve(self, node: ast.AST) -> str | None:
        return resolve_dotted(node, self.aliases)

    def _subtree(self, stmt: ast.stmt, chunk: Chunk) -> list[Entry]:
        """The statements under a top-level statement, in the order of `walk_statements(module)` (cached)."""
        key = ("statements", id(stmt))
        cached = chunk.memo.get(key)
        if cached is None:
            _, prefix, scope, scope_node = top_entry(stmt)
            cached = list(walk_statements(stmt, prefix, scope, scope_node))
            chunk.memo[key] = cached
        return cached

    def _interesting(self, stmt: ast.stmt, chunk: Chunk) -> list[Entry]:
        """Imports and decorated defs under a top-level statement, in walk order (cached)."""
        key = ("interesting", id(stmt))
        cached = chunk.memo.get(key)
        if cached is None:
            cached = [entry for entry in self._subtree(stmt, chunk) if _is_interesting(entry[0])]
            chunk.memo[key] = cached
        return cached

    def build(self) -> ModuleInfo:
        tops = [(stmt, chunk) for chunk in self.chunks for stmt in chunk.stmts]
        other: set[str] = set()
        defs: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
        # The order of a statement walk of the module: the top-level statements last to first, then the
        # subtree of each (the order decides which of two imports binding one name wins).
        entries: list[tuple[ast.AST, str]] = [(stmt, top_entry(stmt)[0]) for stmt, _ in reversed(tops)]
        for stmt, chunk in tops:
            entries.extend((node, qualname) for node, qualname, _, _ in self._interesting(stmt, chunk))
        for node, qualname in entries:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                add_import(node, self.aliases, other)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                defs.append((node, qualname))
        # Snippets pasted without imports still read `triton.jit` / `tl.load` the conventional way.
        for name, target in (("triton", "triton"), ("tl", "triton.language")):
            if name not in self.aliases and name not in other:
                self.aliases[name] = target
        self.aliases_key = tuple(self.aliases.items())
        jitted: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, Decorators]] = []
        wrapped = self._call_form_jits(tops)
        top_defs = {id(stmt) for stmt, _ in tops}
        for node, qualname in defs:
            decorators = self._decorators(node)
            later = wrapped.get(node.name) if id(node) in top_defs else None
            if decorators.is_jit and later:  # `k = triton.autotune(...)(k)` after the def: outermost wrappers
                decorators = self._decorators_of([*later, *node.decorator_list])
            if decorators.is_jit:
                jitted.append((node, qualname, decorators))
        if wrapped:
            seen = {id(node) for node, _, _ in jitted}
            for stmt, _ in tops:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in wrapped:
                    decorators = self._decorators_of([*stmt.decorator_list, *wrapped[stmt.name]])
                    if decorators.is_jit and id(stmt) not in seen:
                        jitted.append((stmt, stmt.name, decorators))
        jitted.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        names = {node.name for node, _, _ in jitted}
        searched = names | self.alias_names(names) if names else names
        launches = tuple(self._launches(tops, searched, frozenset(searched), names)) if names else ()
        names_key = frozenset(names)
        launched = {site.kernel for site in launches}
        owners = self._owners(tops, [node for node, _, _ in jitted])
        calls = {
            node.name: self._jit_calls(node, names, names_key, owners.get(id(node))) for node, _, _ in jitted
        }
        called_by_jit = {callee for callees in calls.values() for callee in callees}
        infos: list[KernelInfo] = []
        for node, qualname, decorators in jitted:
            infos.append(
                self._kernel(
                    node,
                    qualname,
                    decorators,
                    calls=calls[node.name],
                    helpers=_transitive(node.name, calls),
                    is_helper=node.name in called_by_jit and node.name not in launched,
                    launched=node.name in launched,
                    chunk=owners.get(id(node)),
                )
            )
        return ModuleInfo(
            source=self.source,
            kernels=tuple(k for k in infos if not k.is_helper),
            helpers=tuple(k for k in infos if k.is_helper),
            launches=launches,
            aliases=dict(self.aliases),
            tree=self.tree,
            _text=self.lines,
            _trees=self.trees,
            _chunks=tuple(self.chunks),
        )

    @staticmethod
    def _owners(tops: list[tuple[ast.stmt, Chunk]], nodes: list[ast.AST]) -> dict[int, Chunk]:
        """The chunk holding each node (by line: chunks are disjoint, consecutive line ranges)."""
        out: dict[int, Chunk] = {}
        if not nodes or not tops:
            return out
        starts = [stmt.lineno for stmt, _ in tops]
        for node in nodes:
            index = bisect.bisect_right(starts, getattr(node, "lineno", 0)) - 1
            if index >= 0:
                stmt, chunk = tops[index]
                if stmt.lineno <= node.lineno <= (stmt.end_lineno or stmt.lineno):
                    out[id(node)] = chunk
        return out

    # -- kernels ----------------------------------------------------------------------------------------------

    def _kernel(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        qualname: str,
        decorators: Decorators,
        *,
        calls: tuple[str, ...],
        helpers: tuple[str, ...],
        is_helper: bool,
        launched: bool,
        chunk: Chunk | None = None,
    ) -> KernelInfo:
        span, def_span, name_span, params, docstring = self._kernel_parts(node, chunk)
        return KernelInfo(
            name=node.name,
            qualname=qualname,
            span=span,
            def_span=def_span,
            name_span=name_span,
            params=params,
            jit_kwargs=decorators.jit_kwargs,
            autotune=decorators.autotune,
            heuristics=decorators.heuristics,
            calls=calls,
            helpers=helpers,
            is_helper=is_helper,
            launched=launched,
            docstring=docstring,
            node=node,
            decorators=decorators.nodes,
        )

    def _kernel_parts(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, chunk: Chunk | None
    ) -> tuple[Span, Span, Span, tuple[Param, ...], str | None]:
        """Spans, parameters and docstring: they read the function's own lines and the import aliases only."""
        key = ("kernel", id(node))
        if chunk is not None:
            cached = chunk.memo.get(key)
            if cached is not None and cached[0] == self.aliases_key:
                return cached[1]  # type: ignore[no-any-return]
        def_span = self.lines.span(node)
        start = node.decorator_list[0] if node.decorator_list else node
        first = self.lines.span(start)
        # Decorator spans exclude the "@": step back one character to include it.
        span = Span(
            first.line,
            max(first.col - 1, 0) if node.decorator_list else first.col,
            def_span.end_line,
            def_span.end_col,
        )
        parts = (span, def_span, self._name_span(node, def_span), self._params(node), ast.get_docstring(node))
        if chunk is not None:
            chunk.memo[key] = (self.aliases_key, parts)
        return parts

    def _name_span(self, node: ast.FunctionDef | ast.AsyncFunctionDef, def_span: Span) -> Span:
        text = self.lines.line(def_span.line)
        match = _DEF_NAME.match(text, def_span.col)
        col = match.end() if match else def_span.col
        return Span(def_span.line, col, def_span.line, col + len(node.name))

    def _params(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Param, ...]:
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults: dict[int, ast.AST] = {}
        for offset, default in enumerate(args.defaults):
            defaults[id(positional[len(positional) - len(args.defaults) + offset])] = default
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            if kw_default is not None:
                defaults[id(arg)] = kw_default
        ordered: list[tuple[ast.arg, str]] = [(a, "positional") for a in positional]
        if args.vararg:
            ordered.append((args.vararg, "vararg"))
        ordered.extend((a, "keyword_only") for a in args.kwonlyargs)
        if args.kwarg:
            ordered.append((args.kwarg, "kwarg"))
        out: list[Param] = []
        for arg, kind in ordered:
            default = defaults.get(id(arg))
            ok, value = literal(default)
            name_span = self.lines.span(arg)
            name_span = Span(name_span.line, name_span.col, name_span.line, name_span.col + len(arg.arg))
            whole = self.lines.span(arg)
            if default is not None:
                end = self.lines.span(default)
                whole = Span(whole.line, whole.col, end.end_line, end.end_col)
            out.append(
                Param(
                    name=arg.arg,
                    annotation=self.lines.text(arg.annotation) if arg.annotation is not None else None,
                    is_constexpr=self._is_constexpr(arg.annotation),
                    has_default=default is not None,
                    default=value if ok else None,
                    default_text=self.lines.text(default) if default is not None else None,
                    span=whole,
                    name_span=name_span,
                    default_span=self.lines.span(default) if default is not None else None,
                    kind=kind,
                )
            )
        return tuple(out)

    def _is_constexpr(self, annotation: ast.AST | None) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            # A string annotation such as "tl.constexpr" (from __future__ annotations or written quoted).
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        return self.resolve(annotation) == CONSTEXPR

    def _jit_calls(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        names: set[str],
        names_key: frozenset[str],
        chunk: Chunk | None,
    ) -> tuple[str, ...]:
        """Jit functions of this file that `node` calls by name (reads the function's own lines only)."""
        key = ("calls", id(node))
        if chunk is not None:
            cached = chunk.memo.get(key)
            if cached is not None and cached[0] == names_key:
                return cached[1]  # type: ignore[no-any-return]
        calls = self._find_jit_calls(node, names)
        if chunk is not None:
            chunk.memo[key] = (names_key, calls)
        return calls

    def _find_jit_calls(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]
    ) -> tuple[str, ...]:
        others = names - {node.name}
        if not others:
            return ()
        # Cheap text test first: most kernels call no helper, and walking every kernel costs more than parsing.
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        text = "\n".join(self.lines.lines[first - 1 : (node.end_lineno or node.lineno)])
        # One scan for `name(` / `name (`, then set lookups: testing every other name's text against every
        # function was quadratic in files with hundreds of jit functions.
        if not any(m.group(1) in others for m in _CALLED_NAME.finditer(text)):
            return ()
        seen: dict[str, None] = {}
        tree = FunctionTree(node)
        self.trees[id(node)] = tree
        for child in tree.nodes:
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in others:
                seen.setdefault(child.func.id)
        return tuple(seen)


def _transitive(start: str, calls: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    stack = list(reversed(calls.get(start, ())))
    while stack:
        name = stack.pop()
        if name in seen or name == start:
            continue
        seen[name] = None
        stack.extend(reversed(calls.get(name, ())))
    return tuple(seen)
