"""Find the Triton kernels of one Python file: jit functions, their helpers, autotune data and launch sites.

`parse_module(source)` never raises. It reads the text with `ast` only (no import, no execution), so it works on
unsaved buffers, half-typed code and files whose imports are missing. Positions follow `findings.Span`: lines
1-based, columns 0-based *characters* (ast gives UTF-8 byte columns; they are converted here).

What counts as a jit function: a `def` (at any nesting depth) decorated with `triton.jit` under any import alias
(`import triton as tr` -> `@tr.jit`, `from triton import jit` -> `@jit`), with or without call arguments, possibly
under `@triton.autotune(...)` / `@triton.heuristics(...)`. The call forms `fn = triton.jit(fn)`,
`kernel = triton.autotune(...)(triton.jit(fn))` and a bare `triton.jit(fn)` statement (module level, or under a
module-level `if`/`try`) make the module-level `def fn` a jit function too, with the wrapping calls read as its
decorators (outermost first).

Per keystroke cost: the text is parsed incrementally (`analysis.source_chunks`: unchanged chunks of top-level
statements reuse their trees) and facts local to one chunk are kept in its memo, so re-parsing an edited file
costs little more than the edited chunk. Results are those of a cold whole-file parse
(tests/triage/test_incremental_parse.py). Trees may be shared between parses: never mutate them.

Kernels vs helpers: a jit function called (by name) from another jit function of the file and never launched with
`name[grid](...)` in the file is a *helper*; every other jit function is a *kernel*. Each kernel lists the helpers it
reaches, transitively. Helpers imported from other files are not followed.
"""

from __future__ import annotations

import ast
import bisect
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .findings import Span
from .source_chunks import Chunk, parse_chunked

# Canonical spellings of the decorators and objects we look for; aliases are resolved to these.
JIT = "triton.jit"
AUTOTUNE = "triton.autotune"
HEURISTICS = "triton.heuristics"
CONFIG = "triton.Config"
CONSTEXPR = "triton.language.constexpr"
_CANONICAL = {
    "triton.runtime.jit.jit": JIT,
    "triton.runtime.autotuner.autotune": AUTOTUNE,
    "triton.runtime.autotune": AUTOTUNE,
    "triton.runtime.autotuner.heuristics": HEURISTICS,
    "triton.runtime.heuristics": HEURISTICS,
    "triton.runtime.autotuner.Config": CONFIG,
    "triton.runtime.Config": CONFIG,
    "triton.language.core.constexpr": CONSTEXPR,
}
# Positional order of triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook).
_CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")
_NO_VALUE = object()
log = logging.getLogger(__name__)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CALLED_NAME = re.compile(r"(\w+) ?\(")
_DEF_NAME = re.compile(r"(?:async\s+)?def\s+")


@dataclass(frozen=True)
class SyntaxErrorInfo:
    """Where the Python parser stopped (1-based line, 0-based character column)."""

    message: str
    line: int
    col: int
    end_line: int
    end_col: int

    @property
    def span(self) -> Span:
        return Span(self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str | None  # source text, e.g. "tl.constexpr"
    is_constexpr: bool
    has_default: bool
    default: Any  # literal value of the default (None when absent or not a literal: see default_text)
    default_text: str | None
    span: Span  # the whole parameter, annotation and default included
    name_span: Span
    default_span: Span | None = None
    kind: str = "positional"  # "positional" | "keyword_only" | "vararg" | "kwarg"


@dataclass(frozen=True)
class AutotuneInfo:
    """`@triton.autotune(configs=[...], key=[...], ...)`.

    `configs` holds one dict per literal `triton.Config(...)`: {"kwargs": {...}, "num_warps": 4, ...} with only the
    keys that were written (non-literal values appear as their source text). `configs_literal` is False when the
    list could not be read completely (a comprehension, a function call): then `configs` holds what could be read.
    """

    configs: tuple[dict[str, Any], ...]
    config_spans: tuple[Span, ...]
    key: tuple[str, ...]
    configs_literal: bool
    configs_text: str
    options: dict[str, str]  # the other keyword arguments, as source text
    span: Span


@dataclass(frozen=True)
class KernelInfo:
    """One `@triton.jit` function (a kernel or a helper)."""

    name: str
    qualname: str  # dotted path of enclosing defs/classes, e.g. "test_add.<locals>.add_kernel"
    span: Span  # decorators through the end of the body
    def_span: Span  # the `def` statement without decorators
    name_span: Span
    params: tuple[Param, ...]
    jit_kwargs: dict[str, Any]  # literal values of @triton.jit(...) arguments (source text if not literal)
    autotune: AutotuneInfo | None
    heuristics: dict[str, str]  # param -> lambda source text
    calls: tuple[str, ...]  # jit functions of this file called directly, in first-call order
    helpers: tuple[str, ...]  # jit functions reached transitively (excluding itself)
    is_helper: bool
    launched: bool  # a `name[grid](...)` launch exists in this file
    docstring: str | None
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(compare=False, repr=False)

    @property
    def autotune_configs(self) -> list[dict[str, Any]]:
        return list(self.autotune.configs) if self.autotune else []

    @property
    def autotune_key(self) -> list[str]:
        return list(self.autotune.key) if self.autotune else []

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def constexpr_params(self) -> list[Param]:
        return [p for p in self.params if p.is_constexpr]


@dataclass(frozen=True)
class LaunchArg:
    """One argument of a launch, positional (name None) or keyword."""

    name: str | None
    text: str
    has_literal: bool
    value: Any  # the literal value when has_literal
    span: Span
    starred: bool = False  # *args or **kwargs


@dataclass(frozen=True)
class LaunchSite:
    """`kernel[grid](args...)` somewhere in the file."""

    kernel: str
    span: Span  # the whole call
    grid_text: str
    grid_span: Span
    grid_value: tuple[Any, ...] | None  # when the grid is a literal tuple (or int)
    grid_resolved_text: str | None  # when the grid is a name assigned once in the same scope
    grid_resolved_value: tuple[Any, ...] | None
    args: tuple[LaunchArg, ...]
    kwargs: tuple[LaunchArg, ...]
    function: str | None  # the enclosing def, None at module level
    node: ast.Call = field(compare=False, repr=False)

    def kwarg(self, name: str) -> LaunchArg | None:
        return next((a for a in self.kwargs if a.name == name), None)

    def bind(self, kernel: KernelInfo) -> dict[str, LaunchArg]:
        """Map the kernel's parameter names to the arguments of this launch (stops at the first *args)."""
        out: dict[str, LaunchArg] = {}
        positional = [p for p in kernel.params if p.kind == "positional"]
        for param, arg in zip(positional, self.args, strict=False):
            if arg.starred:
                break
            out[param.name] = arg
        names = {p.name for p in kernel.params}
        for arg in self.kwargs:
            if arg.name in names:
                out[arg.name] = arg
        return out


@dataclass(frozen=True)
class ModuleInfo:
    """Everything level 1 and the later levels need to know about one file's kernels."""

    source: str = field(repr=False)
    kernels: tuple[KernelInfo, ...] = ()
    helpers: tuple[KernelInfo, ...] = ()
    launches: tuple[LaunchSite, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> canonical dotted name
    syntax_error: SyntaxErrorInfo | None = None
    tree: ast.Module | None = field(default=None, compare=False, repr=False)
    _text: _SourceText | None = field(default=None, compare=False, repr=False)
    # Per-file caches shared by every analysis of this module (keyed by id() of AST nodes of `tree`).
    _trees: dict[int, FunctionTree] = field(default_factory=dict, compare=False, repr=False)
    _resolved: dict[int, str | None] = field(default_factory=dict, compare=False, repr=False)
    # Per-file facts an analysis computes once per jit function, keyed by (what, function name, line).
    memo: dict[tuple[object, ...], Any] = field(default_factory=dict, compare=False, repr=False)
    # The parsed chunks whose statements make up `tree.body` (see analysis.source_chunks), with their memos.
    _chunks: tuple[Chunk, ...] = field(default=(), compare=False, repr=False)

    # Lookups are indexed once per module (the fields never change): callers ask per helper and per launch,
    # and a scan or sort per question made files with hundreds of helpers cubic.
    @cached_property
    def _ordered(self) -> tuple[KernelInfo, ...]:
        return tuple(sorted((*self.kernels, *self.helpers), key=lambda k: (k.span.line, k.span.col)))

    @cached_property
    def _by_name(self) -> dict[str, KernelInfo]:
        index: dict[str, KernelInfo] = {}
        for k in self._ordered:
            index.setdefault(k.name, k)
        return index

    @cached_property
    def _launches_by_kernel(self) -> dict[str, tuple[LaunchSite, ...]]:
        index: dict[str, list[LaunchSite]] = {}
        for launch in self.launches:
            index.setdefault(launch.kernel, []).append(launch)
        return {name: tuple(sites) for name, sites in index.items()}

    @property
    def functions(self) -> list[KernelInfo]:
        """Kernels and helpers in source order."""
        return list(self._ordered)

    def kernel(self, name: str) -> KernelInfo | None:
        """The kernel (or helper) with this name; the first in source order if several share it."""
        return self._by_name.get(name)

    def launches_of(self, name: str) -> list[LaunchSite]:
        return list(self._launches_by_kernel.get(name, ()))

    def resolve(self, node: ast.AST) -> str | None:
        """Canonical dotted name of a Name/Attribute chain, e.g. `tl.load` -> "triton.language.load"."""
        key = id(node)
        if key in self._resolved:
            return self._resolved[key]
        name = _resolve(node, self.aliases)
        self._resolved[key] = name
        return name

    def function_tree(self, kernel: KernelInfo) -> FunctionTree:
        """All nodes of a jit function with parent/children links (computed once per file)."""
        tree = self._trees.get(id(kernel.node))
        if tree is None:
            tree = FunctionTree(kernel.node)
            self._trees[id(kernel.node)] = tree
        return tree

    def span_of(self, node: ast.AST) -> Span:
        return self._source_text().span(node)

    def text_of(self, node: ast.AST) -> str:
        return self._source_text().text(node)

    def line_text(self, line: int) -> str:
        return self._source_text().line(line)

    @property
    def language_alias(self) -> str:
        """How this file spells `triton.language` (for fixes): "tl", or "triton.language" when not imported."""
        for local, target in self.aliases.items():
            if target == "triton.language" and local.isidentifier():
                return local
        return "triton.language"

    def _source_text(self) -> _SourceText:
        return self._text if self._text is not None else _SourceText(self.source)


class _SourceText:
    """Line table of the source, converting ast's UTF-8 byte columns into character columns."""

    def __init__(self, source: str) -> None:
        self.lines = _LINE_BREAK.split(source) if "\r" in source else source.split("\n")
        self._encoded: dict[int, bytes] = {}
        # In an ASCII file byte columns are character columns: spans and texts need no encoding at all.
        self.ascii = source.isascii()

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 1 <= lineno <= len(self.lines) else ""

    def _bytes(self, lineno: int) -> bytes:
        cached = self._encoded.get(lineno)
        if cached is None:
            cached = self.line(lineno).encode("utf-8", errors="surrogatepass")
            self._encoded[lineno] = cached
        return cached

    def char_col(self, lineno: int, byte_col: int) -> int:
        if self.ascii:
            return byte_col
        text = self.line(lineno)
        if text.isascii():
            return byte_col
        return len(self._bytes(lineno)[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        byte_col = getattr(node, "col_offset", 0)
        end_byte = getattr(node, "end_col_offset", None)
        if self.ascii:
            return Span(line, byte_col, end_line, end_byte if end_byte is not None else byte_col)
        col = self.char_col(line, byte_col)
        end_col = self.char_col(end_line, end_byte) if end_byte is not None else col
        return Span(line, col, end_line, end_col)

    def text(self, node: ast.AST) -> str:
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        col = getattr(node, "col_offset", None)
        end_col = getattr(node, "end_col_offset", None)
        if line is None or end_line is None or col is None or end_col is None:
            return ""
        if self.ascii:
            # Same slices as the byte path below: ASCII characters are single bytes.
            if line == end_line:
                return self.line(line)[col:end_col]
            parts = [self.line(line)[col:]]
            parts.extend(self.line(n) for n in range(line + 1, end_line))
            parts.append(self.line(end_line)[:end_col])
            return "\n".join(parts)
        if line == end_line:
            raw = self._bytes(line)[col:end_col]
        else:
            parts_b = [self._bytes(line)[col:]]
            parts_b.extend(self._bytes(n) for n in range(line + 1, end_line))
            parts_b.append(self._bytes(end_line)[:end_col])
            raw = b"\n".join(parts_b)
        return raw.decode("utf-8", errors="replace")


def parse_module(source: str) -> ModuleInfo:
    """Parse `source` and describe its Triton kernels; never raises (see the module docstring)."""
    if not isinstance(source, str):
        return ModuleInfo(source="", syntax_error=SyntaxErrorInfo("source is not text", 1, 0, 1, 0))
    # Editors do not count a leading byte-order mark as a character, and ast rejects it in a str.
    text = source[1:] if source.startswith("\ufeff") else source
    lines = _SourceText(text)
    try:
        tree, chunks = parse_chunked(text, lines.lines)
    except SyntaxError as exc:
        return ModuleInfo(source=text, syntax_error=_syntax_error(exc, lines), _text=lines)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        # Null bytes, unencodable surrogates, absurd nesting: report at the top of the file.
        message = "expression nested too deeply to parse" if isinstance(exc, RecursionError) else str(exc)
        return ModuleInfo(source=text, syntax_error=SyntaxErrorInfo(message, 1, 0, 1, 0), _text=lines)
    try:
        return _Collector(text, tree, lines, chunks).build()
    except Exception:  # noqa: BLE001 - the contract is "never raises": degrade to "no kernels found"
        # e.g. pathologically deep trees that ast.parse accepted but a recursive helper cannot follow.
        log.exception("parse_module: could not collect kernels")
        return ModuleInfo(source=text, tree=tree, _text=lines)


def _syntax_error(exc: SyntaxError, lines: _SourceText) -> SyntaxErrorInfo:
    message = exc.msg or "invalid syntax"
    line = exc.lineno or 1
    line = min(max(line, 1), max(len(lines.lines), 1))
    # SyntaxError.offset is a 1-based character offset (0 or None when unknown).
    col = max((exc.offset or 1) - 1, 0)
    end_line = exc.end_lineno or line
    end_col = (exc.end_offset or 0) - 1
    if end_line < line or (end_line == line and end_col <= col):
        end_line, end_col = line, col + 1
    line_len = len(lines.line(line))
    col = min(col, line_len)
    if end_line == line:
        end_col = min(end_col, max(line_len, col))
    return SyntaxErrorInfo(message, line, col, end_line, end_col)


def _resolve(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id)
    if base is None:
        return None
    parts.append(base)
    dotted = ".".join(reversed(parts))
    return _CANONICAL.get(dotted, dotted)


def literal(node: ast.AST | None) -> tuple[bool, Any]:
    """(True, value) when `node` is a literal (numbers, strings, tuples/lists/dicts of them, small int arithmetic)."""
    if node is None:
        return False, None
    value = _literal(node, 0)
    return (False, None) if value is _NO_VALUE else (True, value)


def _literal(node: ast.AST, depth: int) -> Any:
    if depth > 20:
        return _NO_VALUE
    if isinstance(node, ast.Constant):
        return _NO_VALUE if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand, depth + 1)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return _NO_VALUE
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_literal(e, depth + 1) for e in node.elts]
        if any(i is _NO_VALUE for i in items):
            return _NO_VALUE
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return _NO_VALUE
        keys = [_literal(k, depth + 1) for k in node.keys if k is not None]
        values = [_literal(v, depth + 1) for v in node.values]
        if any(x is _NO_VALUE for x in (*keys, *values)):
            return _NO_VALUE
        try:
            return dict(zip(keys, values, strict=True))
        except TypeError:
            return _NO_VALUE
    if isinstance(node, ast.BinOp):
        return _int_arith(node, depth)
    return _NO_VALUE


def _int_arith(node: ast.BinOp, depth: int) -> Any:
    # Block sizes are often written 2**10 or 64 * 2; evaluate small integer arithmetic only.
    left, right = _literal(node.left, depth + 1), _literal(node.right, depth + 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
        return _NO_VALUE
    op = node.op
    try:
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right if abs(left) < 2**32 and abs(right) < 2**32 else _NO_VALUE
        if isinstance(op, ast.FloorDiv):
            return left // right
        if isinstance(op, ast.Mod):
            return left % right
        if isinstance(op, ast.Pow):
            return left**right if 0 <= right <= 64 and abs(left) < 2**16 else _NO_VALUE
        if isinstance(op, ast.LShift):
            return left << right if 0 <= right <= 64 else _NO_VALUE
        if isinstance(op, ast.RShift):
            return left >> right if right >= 0 else _NO_VALUE
    except (ZeroDivisionError, OverflowError, ValueError):
        return _NO_VALUE
    return _NO_VALUE


# Names libraries re-export Triton under (vllm.triton_utils, vendor shims): taken as Triton wherever imported from.
_REEXPORTED = {"triton": "triton", "tl": "triton.language"}


def _add_import(node: ast.Import | ast.ImportFrom, aliases: dict[str, str], other: set[str]) -> None:
    if isinstance(node, ast.Import):
        for item in node.names:
            if item.name == "triton" or item.name.startswith("triton."):
                if item.asname:
                    aliases[item.asname] = item.name
                else:
                    aliases["triton"] = "triton"
            else:
                other.add(item.asname or item.name.split(".")[0])
    elif node.module and node.level == 0:
        if node.module == "triton" or node.module.startswith("triton."):
            for item in node.names:
                if item.name != "*":
                    aliases[item.asname or item.name] = f"{node.module}.{item.name}"
        else:
            for item in node.names:
                if item.name in _REEXPORTED:  # `from vllm.triton_utils import tl, triton`: Triton re-exported
                    aliases[item.asname or item.name] = _REEXPORTED[item.name]
                else:
                    other.add(item.asname or item.name)


# Fields that hold nested statements; everything else of a statement is its "header" (expressions).
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(
    root: ast.AST, prefix: str = "", scope: str | None = None, scope_node: ast.AST | None = None
) -> Iterator[tuple[ast.AST, str, str | None, ast.AST | None]]:
    """Every statement (not expression) under `root` with its qualname prefix, enclosing def name and node
    (`scope_node` as given for statements of the root's own scope: None stands for the module).

    Walking statements only is several times cheaper than `ast.walk`; expressions are visited only where
    needed (decorators, and lines that may hold a launch)."""
    stack: list[tuple[ast.AST, str, str | None, ast.AST | None]] = [(root, prefix, scope, scope_node)]
    while stack:
        node, prefix, scope, scope_node = stack.pop()
        for fname in _BODY_FIELDS:
            children = getattr(node, fname, None)
            if not isinstance(children, list):
                continue
            for child in reversed(children):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    stack.append((child, f"{qual}.<locals>.", child.name, child))
                    yield child, qual, scope, scope_node
                elif isinstance(child, ast.ClassDef):
                    qual = f"{prefix}{child.name}"
                    stack.append((child, f"{qual}.", scope, scope_node))
                    yield child, qual, scope, scope_node
                else:
                    stack.append((child, prefix, scope, scope_node))
                    yield child, prefix, scope, scope_node


def _top_entry(stmt: ast.stmt) -> tuple[str, str, str | None, ast.AST | None]:
    """(qualname, prefix for its body, scope, scope node) of a top-level statement; None is the module."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name, f"{stmt.name}.<locals>.", stmt.name, stmt
    if isinstance(stmt, ast.ClassDef):
        return stmt.name, f"{stmt.name}.", None, None
    return "", "", None, None


def call_form_wrappers(stmts: list[ast.stmt]) -> dict[str, list[ast.expr]]:
    """For `x = A(B(f))` / a bare `A(B(f))` among `stmts` (and under their `if`/`try` blocks): f -> [A, B],
    the wrapping callables outermost first, as a decorator list reads. Callers decide which chains are jit."""
    out: dict[str, list[ast.expr]] = {}
    stack: list[ast.stmt] = list(stmts)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.If, ast.Try)):
            for name in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(stmt, name, []) or []:
                    stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
            continue
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr, ast.AnnAssign)) else None
        chain: list[ast.expr] = []
        while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
            chain.append(value.func)
            value = value.args[0]
        if chain and isinstance(value, ast.Name):
            out[value.id] = chain
    return out


def _is_interesting(node: ast.AST) -> bool:
    """Statements `build` looks at: imports and decorated defs."""
    return isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and bool(node.decorator_list)
    )


def _header_nodes(stmt: ast.AST) -> Iterator[ast.AST]:
    """Every expression node of a statement outside its nested statement bodies."""
    for fname, value in ast.iter_fields(stmt):
        if fname in _BODY_FIELDS:
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.AST):
                yield from walk_nodes(item)


_Entry = tuple[ast.AST, str, str | None, ast.AST | None]


class _Collector:
    """Builds a ModuleInfo. What depends on one chunk of top-level statements only (its statement list,
    parameters, helper calls, launches inside functions) is kept in the chunk's memo, so that re-parsing a
    file after an edit recomputes it for the edited chunk only (see analysis.source_chunks)."""

    def __init__(self, source: str, tree: ast.Module, lines: _SourceText, chunks: list[Chunk]) -> None:
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
        return _resolve(node, self.aliases)

    def _subtree(self, stmt: ast.stmt, chunk: Chunk) -> list[_Entry]:
        """The statements under a top-level statement, in the order of `_statements(module)` (cached)."""
        key = ("statements", id(stmt))
        cached = chunk.memo.get(key)
        if cached is None:
            _, prefix, scope, scope_node = _top_entry(stmt)
            cached = list(_statements(stmt, prefix, scope, scope_node))
            chunk.memo[key] = cached
        return cached

    def _interesting(self, stmt: ast.stmt, chunk: Chunk) -> list[_Entry]:
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
        entries: list[tuple[ast.AST, str]] = [(stmt, _top_entry(stmt)[0]) for stmt, _ in reversed(tops)]
        for stmt, chunk in tops:
            entries.extend((node, qualname) for node, qualname, _, _ in self._interesting(stmt, chunk))
        for node, qualname in entries:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                _add_import(node, self.aliases, other)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                defs.append((node, qualname))
        # Snippets pasted without imports still read `triton.jit` / `tl.load` the conventional way.
        for name, target in (("triton", "triton"), ("tl", "triton.language")):
            if name not in self.aliases and name not in other:
                self.aliases[name] = target
        self.aliases_key = tuple(self.aliases.items())
        jitted: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, _Decorators]] = []
        for node, qualname in defs:
            decorators = self._decorators(node)
            if decorators.is_jit:
                jitted.append((node, qualname, decorators))
        wrapped = self._call_form_jits(tops)
        if wrapped:
            seen = {id(node) for node, _, _ in jitted}
            for stmt, _ in tops:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in wrapped:
                    decorators = self._decorators_of([*stmt.decorator_list, *wrapped[stmt.name]])
                    if decorators.is_jit and id(stmt) not in seen:
                        jitted.append((stmt, stmt.name, decorators))
        jitted.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        names = {node.name for node, _, _ in jitted}
        names_key = frozenset(names)
        launches = tuple(self._launches(tops, names, names_key)) if names else ()
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

    def _hit_lines(self, names: set[str], names_key: frozenset[str]) -> list[int]:
        """Lines (1-based, ascending) where `name[` appears for one of `names`."""
        alternatives = "|".join(re.escape(n) for n in sorted(names))
        pattern = re.compile(r"\b(?:" + alternatives + r")\s*\[")
        if "\r" in self.source:
            return [i for i, text in enumerate(self.lines.lines, start=1) if pattern.search(text)]
        # Without CR the chunks cover the lines one after the other: search each chunk's lines once per set
        # of names (a search over a chunk's text finds the lines a search per line finds: `\s` never matches a
        # line break between the name and the bracket, whose lines `\n` separates).
        pattern = re.compile(r"\b(?:" + alternatives + r")[^\S\n]*\[")
        out: list[int] = []
        lines = self.lines.lines
        for chunk in self.chunks:
            cached = chunk.memo.get(("hit_lines",))
            if cached is None or cached[0] != names_key:
                text = "\n".join(lines[chunk.start : chunk.end])
                found: list[int] = []
                line, pos = chunk.start + 1, 0
                for match in pattern.finditer(text):
                    line += text.count("\n", pos, match.start())
                    pos = match.start()
                    if not found or found[-1] != line:
                        found.append(line)
                cached = (names_key, found)
                chunk.memo[("hit_lines",)] = cached
            out.extend(cached[1])
        return out

    def _launches(
        self, tops: list[tuple[ast.stmt, Chunk]], names: set[str], names_key: frozenset[str]
    ) -> list[LaunchSite]:
        """Launch sites `name[grid](...)`, looking only at statements on lines where `name[` appears."""
        hit_lines = self._hit_lines(names, names_key)
        if not hit_lines:
            return []

        def hit(first: int, last: int) -> bool:
            index = bisect.bisect_left(hit_lines, first)
            return index < len(hit_lines) and hit_lines[index] <= last

        found: dict[int, LaunchSite] = {}
        for top, chunk in tops:
            first = top.lineno
            if not hit(first, top.end_lineno or first):
                continue  # nothing under this statement is on a hit line
            entries: list[_Entry] = [(top, "", None, None), *self._subtree(top, chunk)]
            for stmt, _, scope, scope_node in entries:
                first = getattr(stmt, "lineno", 0)
                last = getattr(stmt, "end_lineno", first) or first
                if not hit(first, last):
                    continue
                for node in self._subscript_calls(stmt, chunk):
                    if id(node) not in found:
                        site = self._launch_cached(node, scope, scope_node, names, chunk)
                        if site is not None:
                            found[id(node)] = site
        return sorted(found.values(), key=lambda site: (site.span.line, site.span.col))

    @staticmethod
    def _subscript_calls(stmt: ast.AST, chunk: Chunk) -> list[ast.Call]:
        """Calls of the form `x[...](...)` in a statement's header, in walk order (cached)."""
        key = ("subscript_calls", id(stmt))
        cached = chunk.memo.get(key)
        if cached is None:
            cached = [
                node
                for node in _header_nodes(stmt)
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

    # -- decorators -------------------------------------------------------------------------------------------

    def _call_form_jits(self, tops: list[tuple[ast.stmt, Chunk]]) -> dict[str, list[ast.expr]]:
        """def name -> the calls wrapping it (outermost first) in `x = triton.jit(f)`-style statements."""
        if "jit(" not in self.source:  # the common case costs one text search
            return {}
        chains = call_form_wrappers([stmt for stmt, _ in tops])
        return {
            name: chain
            for name, chain in chains.items()
            if any(self.resolve(d.func if isinstance(d, ast.Call) else d) == JIT for d in chain)
        }

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> _Decorators:
        return self._decorators_of(node.decorator_list)

    def _decorators_of(self, decorator_list: list[ast.expr]) -> _Decorators:
        out = _Decorators()
        for deco in decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = self.resolve(target)
            if name == JIT:
                out.is_jit = True
                if isinstance(deco, ast.Call):
                    for kw in deco.keywords:
                        if kw.arg:
                            ok, value = literal(kw.value)
                            out.jit_kwargs[kw.arg] = value if ok else self.lines.text(kw.value)
            elif name == AUTOTUNE and isinstance(deco, ast.Call):
                out.autotune = self._autotune(deco)
            elif name == HEURISTICS and isinstance(deco, ast.Call):
                out.heuristics.update(self._heuristics(deco))
        return out

    def _autotune(self, call: ast.Call) -> AutotuneInfo:
        args = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        # autotune(configs, key, ...) positionally
        for pos, name in enumerate(("configs", "key")):
            if pos < len(call.args) and name not in args:
                args[name] = call.args[pos]
        configs_node = args.get("configs")
        if isinstance(configs_node, ast.Name) and configs_node.id in self.module_assigns:
            configs_node = self.module_assigns[configs_node.id]
        configs: list[dict[str, Any]] = []
        spans: list[Span] = []
        complete = isinstance(configs_node, (ast.List, ast.Tuple))
        if isinstance(configs_node, (ast.List, ast.Tuple)):
            for element in configs_node.elts:
                config = self._config(element)
                if config is None:
                    complete = False
                    continue
                configs.append(config)
                spans.append(self.lines.span(element))
        key_node = args.get("key")
        if isinstance(key_node, ast.Name) and key_node.id in self.module_assigns:
            key_node = self.module_assigns[key_node.id]
        key: tuple[str, ...] = ()
        if isinstance(key_node, (ast.List, ast.Tuple)):
            key = tuple(
                e.value for e in key_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
        options = {k: self.lines.text(v) for k, v in args.items() if k not in ("configs", "key")}
        return AutotuneInfo(
            configs=tuple(configs),
            config_spans=tuple(spans),
            key=key,
            configs_literal=complete,
            configs_text=self.lines.text(args["configs"]) if "configs" in args else "",
            options=options,
            span=self.lines.span(call),
        )

    def _config(self, node: ast.AST) -> dict[str, Any] | None:
        if not isinstance(node, ast.Call) or self.resolve(node.func) != CONFIG:
            return None
        out: dict[str, Any] = {}
        for pos, arg in enumerate(node.args[: len(_CONFIG_POSITIONAL)]):
            out[_CONFIG_POSITIONAL[pos]] = self._value(arg)
        for kw in node.keywords:
            if kw.arg:
                out[kw.arg] = self._value(kw.value)
        if not isinstance(out.get("kwargs", {}), dict):
            out["kwargs_text"] = out.pop("kwargs")
        out.setdefault("kwargs", {})
        return out

    def _value(self, node: ast.AST) -> Any:
        ok, value = literal(node)
        if ok:
            return value
        if isinstance(node, ast.Dict):
            # Keep the literal entries of a partly computed dict.
            return {
                k.value: (v if ok_v else self.lines.text(vn))
                for k, vn in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
                for ok_v, v in [literal(vn)]
            }
        return self.lines.text(node)

    def _heuristics(self, call: ast.Call) -> dict[str, str]:
        values = (
            call.args[0]
            if call.args
            else next((kw.value for kw in call.keywords if kw.arg == "values"), None)
        )
        if not isinstance(values, ast.Dict):
            return {}
        return {
            k.value: self.lines.text(v)
            for k, v in zip(values.keys, values.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }

    # -- kernels ----------------------------------------------------------------------------------------------

    def _kernel(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        qualname: str,
        decorators: _Decorators,
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

    # -- launches ---------------------------------------------------------------------------------------------

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
        grid_value = _grid_literal(grid)
        resolved_text: str | None = None
        resolved_value: tuple[Any, ...] | None = None
        if isinstance(grid, ast.Name):
            assigned = self._scope_assignments(scope_node).get(grid.id)
            if assigned is not None:
                resolved_text = self.lines.text(assigned)
                resolved_value = _grid_literal(assigned)
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
            cached = _single_assignments(scope)
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


@dataclass
class _Decorators:
    is_jit: bool = False
    jit_kwargs: dict[str, Any] = field(default_factory=dict)
    autotune: AutotuneInfo | None = None
    heuristics: dict[str, str] = field(default_factory=dict)


def _grid_literal(node: ast.AST) -> tuple[Any, ...] | None:
    ok, value = literal(node)
    if not ok:
        return None
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


def _single_assignments(scope: ast.AST) -> dict[str, ast.AST]:
    """name -> value for names the scope (not its nested defs) binds exactly once, by `=` (or `x: T = v`)."""
    values: dict[str, list[ast.AST | None]] = {}
    stack: list[ast.AST] = [scope]
    while stack:
        parent = stack.pop()
        for fname in _BODY_FIELDS:
            for node in getattr(parent, fname, None) or ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    values.setdefault(node.name, []).append(None)
                    continue
                stack.append(node)
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        simple = isinstance(target, ast.Name)
                        for name in _target_names(target):
                            values.setdefault(name, []).append(node.value if simple else None)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                    keep = node.value if isinstance(node, ast.AnnAssign) else None
                    for name in _target_names(node.target):
                        values.setdefault(name, []).append(keep)
    return {name: found[0] for name, found in values.items() if len(found) == 1 and found[0] is not None}


def _target_names(target: ast.AST) -> set[str]:
    return (
        {target.id}
        if isinstance(target, ast.Name)
        else {n.id for n in walk_nodes(target) if isinstance(n, ast.Name)}
    )


# Fields holding shared singleton nodes (Load/Store, operators) that never matter as tree nodes.
_SKIP_FIELDS = frozenset(("ctx", "op", "ops"))
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(f for f in node_type._fields if f not in _SKIP_FIELDS)
        _FIELDS[node_type] = fields
    return fields


def _children(node: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    node_type = ast.AST
    for name in _fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(item for item in value if isinstance(item, node_type))
        elif isinstance(value, node_type):
            out.append(value)
    return out


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """Like `ast.walk` (breadth first, root included) but faster, returning a list and skipping the
    expression-context and operator singletons (`ast.Load`, `ast.Add`, ...)."""
    nodes = [root]
    index = 0
    while index < len(nodes):
        nodes.extend(_children(nodes[index]))
        index += 1
    return nodes


class FunctionTree:
    """Every node of one function (breadth first) with parent and children links, and cached subtree walks."""

    def __init__(self, root: ast.AST) -> None:
        self.root = root
        self.nodes: list[ast.AST] = [root]
        self.parents: dict[int, ast.AST] = {}
        self.children: dict[int, list[ast.AST]] = {}
        index = 0
        nodes = self.nodes
        while index < len(nodes):
            node = nodes[index]
            index += 1
            kids = _children(node)
            if kids:
                self.children[id(node)] = kids
                for kid in kids:
                    self.parents[id(kid)] = node
                nodes.extend(kids)
        self._walks: dict[int, list[ast.AST]] = {id(root): nodes}

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """The subtree under `node` (node first), cached; nodes outside this function are walked directly."""
        cached = self._walks.get(id(node))
        if cached is None:
            if id(node) not in self.parents:
                cached = walk_nodes(node)
            else:
                cached = [node]
                index = 0
                children = self.children
                while index < len(cached):
                    cached.extend(children.get(id(cached[index]), ()))
                    index += 1
            self._walks[id(node)] = cached
        return cached


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
