"""The kernel model: what every level knows about one file's Triton kernels (`ModuleInfo`, `KernelInfo`, `Param`,
`AutotuneInfo`, `LaunchSite`, `LaunchArg`, `SyntaxErrorInfo`). Built by collection.py; positions follow
`findings.Span`."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..core.findings import Span
from ..source.chunks import Chunk
from ..source.lines import SourceText, SyntaxErrorInfo
from .expressions import resolve_dotted
from .nodes import FunctionTree


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
    # Every decorator expression, outermost first, with the wrapping calls of `fn = triton.jit(fn)` forms after
    # the def's own (what specialization reads configs, heuristics and do_not_specialize from).
    decorators: tuple[ast.expr, ...] = field(default=(), compare=False, repr=False)

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
    # `kernel = fwd_a if cond else fwd_b; kernel[grid](...)`: the name launched, and every kernel it may be
    through: str | None = None
    shared_by: tuple[str, ...] = ()

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
    _text: SourceText | None = field(default=None, compare=False, repr=False)
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
        name = resolve_dotted(node, self.aliases)
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

    def _source_text(self) -> SourceText:
        return self._text if self._text is not None else SourceText(self.source)
