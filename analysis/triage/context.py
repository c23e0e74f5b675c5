"""Facts about one jit function that several triage rules share, computed once per function.

Everything here is syntactic and local to the function: which names hold tensors (derived from `tl.arange` and
friends), which names hold values read by `tl.load`, which names are pointers derived from which parameter, which
loops enclose a node. It is deliberately conservative: when unsure whether a name is a tensor, it is one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..findings import Span
from ..kernels import KernelInfo, LaunchSite, ModuleInfo, Param, literal, walk_nodes

TL = "triton.language."
LOOP_ITERATORS = {"range", TL + "range", TL + "static_range"}
# Calls whose result is a block (tensor) whatever their arguments.
BLOCK_MAKERS = {
    TL + name
    for name in (
        "arange",
        "zeros",
        "full",
        "zeros_like",
        "full_like",
        "make_block_ptr",
        "make_tensor_descriptor",
        "dot",
        "dot_scaled",
        "rand",
        "randn",
        "randint",
        "histogram",
    )
}
# Calls whose result is data, not a per-lane index, even when their arguments are index blocks.
_NOT_INDEX = {
    TL + name
    for name in (
        "load",
        "sum",
        "max",
        "min",
        "reduce",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "sort",
        "xor_sum",
        # random floats: derived from the offsets they are seeded with, but values, not lanes
        "rand",
        "randn",
        "rand4x",
        "randn4x",
    )
}
ATOMICS = {
    TL + name
    for name in (
        "atomic_add",
        "atomic_max",
        "atomic_min",
        "atomic_and",
        "atomic_or",
        "atomic_xor",
        "atomic_xchg",
        "atomic_cas",
    )
}


@dataclass(frozen=True)
class ValueSite:
    """A literal value given to a kernel parameter somewhere: a default, a launch keyword, an autotune config."""

    value: Any
    span: Span
    origin: str  # "default" | "launch" | "autotune" | "heuristics"


@dataclass
class KernelContext:
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
                for target in _names_in(child.target):
                    self._assign(target, child, child.iter)
            elif isinstance(child, ast.Assign):
                for target in child.targets:
                    for name in _names_in(target):
                        self._assign(name, child, child.value)
            elif isinstance(child, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and child.value is not None:
                if isinstance(child, ast.AugAssign):
                    self.increments.add(id(child.value))
                for name in _names_in(child.target):
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
        sites = sorted(self.assign_sites.get(name, ()), key=lambda s: (s[0], s[1]))
        where = (getattr(use, "lineno", 0), getattr(use, "col_offset", 0))
        before = [value for line, col, value in sites if (line, col) < where]
        return before[-1:] if before else [value for _, _, value in sites]

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

    @cached_property
    def block_names(self) -> set[str]:
        """Names that may hold a block (tensor) rather than a scalar: assigned from a block-making call or a
        broadcast, or from another block name. Conservative: a reduction of a block still counts as one."""
        roots = {name for name, values in self.assigns.items() if any(self._makes_block(v) for v in values)}
        return self._propagate(roots, self._users)

    def _makes_block(self, node: ast.AST) -> bool:
        cached = self._block_makers.get(id(node))
        if cached is None:
            cached = any(
                (isinstance(sub, ast.Call) and self.resolve(sub.func) in BLOCK_MAKERS)
                or (isinstance(sub, ast.Subscript) and _is_newaxis_index(sub.slice))
                for sub in self.walk(node)
            )
            self._block_makers[id(node)] = cached
        return cached

    @cached_property
    def _block_makers(self) -> dict[int, bool]:
        return {}

    def is_block_expr(self, node: ast.AST) -> bool:
        return bool(self.names_of(node) & self.block_names) or self._makes_block(node)

    @cached_property
    def load_names(self) -> dict[str, ast.Call]:
        """Names assigned (directly) from a `tl.load(...)` call, possibly followed by `.to(...)`."""
        out: dict[str, ast.Call] = {}
        for name, values in self.assigns.items():
            for value in values:
                call = self.load_call(value)
                if call is not None:
                    out.setdefault(name, call)
        return out

    def load_call(self, node: ast.AST) -> ast.Call | None:
        """The `tl.load` call when `node` is `tl.load(...)` or `tl.load(...).to(...)`/`.cast`."""
        while (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to",)
        ):
            node = node.func.value
        if isinstance(node, ast.Call) and self.resolve(node.func) == TL + "load":
            return node
        return None

    def derived_from(self, node: ast.AST, roots: set[str]) -> bool:
        """Whether `node` reads one of `roots`, directly or through names assigned from them."""
        return bool(self.names_of(node) & self.names_closure(roots))

    def names_closure(self, roots: set[str]) -> set[str]:
        """`roots` and every name whose value is computed (transitively) from them."""
        key = frozenset(roots)
        cached = self._closures.get(key)
        if cached is None:
            cached = self._propagate(set(roots), self._users)
            self._closures[key] = cached
        return cached

    @cached_property
    def _closures(self) -> dict[frozenset[str], set[str]]:
        return {}

    @cached_property
    def program_id_names(self) -> set[str]:
        """Names computed from `tl.program_id` (without a block): scalar per-program indices."""
        roots = set()
        for name, values in self.assigns.items():
            for value in values:
                if any(
                    isinstance(sub, ast.Call) and self.resolve(sub.func) == TL + "program_id"
                    for sub in self.walk(value)
                ):
                    roots.add(name)
        return {n for n in self.names_closure(roots) if n not in self.block_names}

    @cached_property
    def has_broadcast(self) -> bool:
        """Whether the function builds 2-D (or higher) blocks with `x[:, None]` / `x[None, :]`."""
        return any(isinstance(n, ast.Subscript) and _is_newaxis_index(n.slice) for n in self.nodes)

    @cached_property
    def has_arange(self) -> bool:
        """Whether this function or any helper it calls builds a block with tl.arange/make_block_ptr & co."""
        return self._function_makes_blocks(self.kernel) or any(
            self._named_function_makes_blocks(name) for name in self.kernel.helpers
        )

    def _function_makes_blocks(self, fn: KernelInfo) -> bool:
        """Whether `fn`'s own body calls tl.arange, make_block_ptr & co."""
        return any(
            isinstance(sub, ast.Call) and self.resolve(sub.func) in BLOCK_MAKERS
            for sub in self.module.function_tree(fn).nodes
        )

    def _named_function_makes_blocks(self, name: str) -> bool:
        """`_function_makes_blocks` of a helper, by name, memoized per file: every function asks about all of its
        helpers (quadratic in a long call chain otherwise), and only the helpers asked about are read (walking
        every function of the file on each keystroke would defeat triage's per-function cache)."""
        memo: dict[str, bool] = self.module.memo.setdefault(("block_makers",), {})
        found = memo.get(name)
        if found is None:
            fn = self.module.kernel(name)
            found = memo[name] = fn is not None and self._function_makes_blocks(fn)
        return found

    @cached_property
    def index_names(self) -> set[str]:
        """Names holding integer index blocks: derived from tl.arange, not from loaded data or float casts."""
        roots: set[str] = set()
        graph: dict[str, set[str]] = {}
        for name, values in self.assigns.items():
            for value in values:
                arange, refs = self._index_parts(value)
                if arange:
                    roots.add(name)
                for ref in refs:
                    graph.setdefault(ref, set()).add(name)
        return self._propagate(roots, graph)

    def _index_parts(self, node: ast.AST) -> tuple[bool, frozenset[str]]:
        """(contains tl.arange, names read) for `node`, ignoring what is inside tl.load calls and float casts."""
        cached = self._index_cache.get(id(node))
        if cached is not None:
            return cached
        arange = False
        names: set[str] = set()
        stack = [node]
        while stack:
            sub = stack.pop()
            if isinstance(sub, ast.Call):
                resolved = self.resolve(sub.func)
                if resolved == TL + "arange":
                    arange = True
                if resolved in _NOT_INDEX or _is_float_cast(self, sub):
                    continue
            elif isinstance(sub, ast.Name):
                names.add(sub.id)
            stack.extend(self.tree.children.get(id(sub), ()))
        cached = (arange, frozenset(names))
        self._index_cache[id(node)] = cached
        return cached

    @cached_property
    def _index_cache(self) -> dict[int, tuple[bool, frozenset[str]]]:
        return {}

    def is_index_expr(self, node: ast.AST) -> bool:
        """Whether `node` computes an index block (arange-derived) outside of any tl.load / float cast."""
        arange, refs = self._index_parts(node)
        return arange or bool(refs & self.index_names)

    @cached_property
    def one_d_index_names(self) -> set[str]:
        """Index names never broadcast to 2-D on the way (their lanes run along the innermost dimension)."""
        out = set(self.index_names)
        changed = True
        while changed:
            changed = False
            for name in list(out):
                for value in self.assigns.get(name, ()):
                    refs = self.names_of(value)
                    broadcast = any(
                        isinstance(n, ast.Subscript) and _is_newaxis_index(n.slice) for n in self.walk(value)
                    )
                    if broadcast or (refs & self.index_names) - out:
                        out.discard(name)
                        changed = True
                        break
        return out

    def address_exprs(self, pointer: ast.AST) -> list[ast.AST]:
        """The pointer expression and the values that reach the local names it is built from (flow-aware:
        the assignment before each use, so a reused name is not confused with its other values). Loads are
        data, not addresses; a call to a jit helper that is handed a pointer is opaque (its result is not built
        from the loaded values among its arguments: a helper that returns a pointer is not a gather)."""
        out = [pointer]
        seen: set[int] = set()
        stack = [n for n in self.walk(pointer) if isinstance(n, ast.Name)]
        while stack:
            use = stack.pop()
            for value in self.reaching(use.id, use):
                if id(value) in seen or self.load_call(value) is not None or self._returns_a_pointer(value):
                    continue
                seen.add(id(value))
                out.append(value)
                stack.extend(n for n in self.walk(value) if isinstance(n, ast.Name))
        return out

    def _returns_a_pointer(self, node: ast.AST) -> bool:
        """A call to a jit helper of this module that is handed a pointer: its result is taken to be that
        pointer (advanced), not data computed from the other, loaded, arguments. A helper given only data
        (`convert(key)`) stays transparent: its result is derived from what it was given."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and self.module.kernel(node.func.id) is not None
        ):
            return False
        return any(self.base_pointers(arg) for arg in node.args)

    def pointer_arg(self, call: ast.Call) -> ast.AST | None:
        if call.args:
            return call.args[0]
        return next((kw.value for kw in call.keywords if kw.arg == "pointer"), None)

    def base_pointers(self, node: ast.AST) -> set[str]:
        """Parameters that are the base of a pointer expression: reached through `+`/`-` chains and the local
        values that reach each use (a parameter inside a product, call or subscript is an offset or a size, not
        a base; a parameter used as an integer elsewhere, e.g. in a comparison or a range, is not a pointer)."""
        constexpr = {name for name, p in self.params.items() if p.is_constexpr}
        integers = self.integer_params
        out: set[str] = set()
        seen: set[int] = set()
        stack: list[ast.AST] = [node]
        while stack:
            expr = stack.pop()
            if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
                stack.extend((expr.left, expr.right))
            elif isinstance(expr, ast.Name):
                if expr.id in self.params:
                    if expr.id not in constexpr and expr.id not in integers:
                        out.add(expr.id)
                    continue
                for value in self.reaching(expr.id, expr):
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                    if self.load_call(value) is None and id(value) not in self.increments:
                        stack.append(value)
        return out

    @cached_property
    def integer_params(self) -> set[str]:
        """Parameters used as integers somewhere: compared, multiplied, divided, a range bound, or an argument
        of min/max/cdiv. A pointer is only ever offset (`+`/`-`) and loaded from, so none of these is one."""
        params = set(self.params)
        out: set[str] = set()
        for node in self.nodes:
            operands: list[ast.AST] = []
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)):
                operands = [node.left, node.right]
            elif isinstance(node, ast.Call):
                name = self.resolve(node.func) or (node.func.id if isinstance(node.func, ast.Name) else "")
                if name in (
                    "range",
                    "min",
                    "max",
                    TL + "range",
                    TL + "static_range",
                    TL + "cdiv",
                    TL + "minimum",
                    TL + "maximum",
                    "triton.cdiv",
                ):
                    operands = list(node.args)
            out.update(o.id for o in operands if isinstance(o, ast.Name) and o.id in params)
        return out

    def constexpr_guard(self, node: ast.AST) -> str | None:
        """The constexpr flag of the nearest enclosing `if FLAG:` (or `if not FLAG:`) when it has an `else`:
        code chosen at compile time by the caller (e.g. `if LONG_INDEXING:` int64 offsets)."""
        constexpr = {name for name, p in self.params.items() if p.is_constexpr}
        child, parent = node, self.parent(node)
        while parent is not None and parent is not self.kernel.node:
            if isinstance(parent, ast.If) and parent.orelse and child is not parent.test:
                names = self.names_of(parent.test)
                if names and names <= constexpr:
                    return sorted(names)[0]
            child, parent = parent, self.parent(parent)
        return None

    def pointer_roots(self, node: ast.AST) -> set[str]:
        """Kernel parameters a pointer expression is built from (through local names)."""
        params = set(self.params)
        out: set[str] = set()
        seen: set[str] = set()
        stack = list(self.names_of(node))
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in params:
                out.add(name)
                continue
            for value in self.assigns.get(name, ()):
                if self.load_call(value) is not None:
                    continue  # a loaded value is data, not an address
                stack.extend(self.names_of(value))
        return out

    # -- known values of constexpr parameters -----------------------------------------------------------------

    def value_sites(self, param: str) -> list[ValueSite]:
        """Literal values this parameter receives in the file: default, launch keywords/positions, autotune."""
        key = f"value_sites:{param}"
        cached = self.memo.get(key)
        if cached is None:
            cached = self._value_sites(param)
            self.memo[key] = cached
        return cached

    def _value_sites(self, param: str) -> list[ValueSite]:
        sites: list[ValueSite] = []
        p = self.params.get(param)
        if p is not None and p.has_default and p.default_span is not None and _is_number(p.default):
            sites.append(ValueSite(p.default, p.default_span, "default"))
        for launch in self.launches:
            arg = self._bound(launch).get(param)
            if arg is not None and arg.has_literal and _is_number(arg.value):
                sites.append(ValueSite(arg.value, arg.span, "launch"))
        if self.kernel.autotune is not None:
            for config_node in self._config_kwarg_nodes(param):
                ok, value = literal(config_node)
                if ok and _is_number(value):
                    sites.append(ValueSite(value, self.span(config_node), "autotune"))
        return sites

    def _bound(self, launch: LaunchSite) -> dict[str, Any]:
        bound = self._bindings.get(id(launch))
        if bound is None:
            bound = launch.bind(self.kernel)
            self._bindings[id(launch)] = bound
        return bound

    @cached_property
    def _bindings(self) -> dict[int, dict[str, Any]]:
        return {}

    def _config_kwarg_nodes(self, param: str) -> Iterable[ast.AST]:
        """Value nodes for `param` inside the autotune configs' kwargs dicts."""
        for deco in self.kernel.node.decorator_list:
            if not isinstance(deco, ast.Call) or self.resolve(deco.func) != "triton.autotune":
                continue
            for sub in self.walk(deco):
                if isinstance(sub, ast.Call) and self.resolve(sub.func) == "triton.Config":
                    kwargs = (
                        sub.args[0]
                        if sub.args
                        else next((k.value for k in sub.keywords if k.arg == "kwargs"), None)
                    )
                    if isinstance(kwargs, ast.Dict):
                        for key, value in zip(kwargs.keys, kwargs.values, strict=True):
                            if isinstance(key, ast.Constant) and key.value == param:
                                yield value

    @cached_property
    def arange_sizes(self) -> list[tuple[ast.Call, ast.AST]]:
        """(arange call, its end expression) for every `tl.arange(start, end)` in this function."""
        out = []
        for call in self.calls_to(TL + "arange"):
            end = (
                call.args[1]
                if len(call.args) >= 2
                else next((k.value for k in call.keywords if k.arg == "end"), None)
            )
            if end is not None:
                out.append((call, end))
        return out

    @cached_property
    def block_size_params(self) -> set[str]:
        """Parameters used as the size of a block: `tl.arange(0, P)`, or in the shape of tl.zeros/tl.full."""
        params = set(self.params)
        out: set[str] = set()
        for _, end in self.arange_sizes:
            out.update(n for n in _bare_names(end) if n in params)
        for call in self.calls_to(TL + "zeros", TL + "full"):
            shape = (
                call.args[0]
                if call.args
                else next((k.value for k in call.keywords if k.arg == "shape"), None)
            )
            if shape is not None:
                out.update(n for n in _bare_names(shape) if n in params)
        return out


def _bare_names(node: ast.AST) -> set[str]:
    """Names used as values, not as the object of an attribute (`x.shape` does not make `x` a size)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Attribute):
            continue
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        stack.extend(ast.iter_child_nodes(sub))
    return out


def _names_in(target: ast.AST) -> list[str]:
    return (
        [n.id for n in walk_nodes(target) if isinstance(n, ast.Name)]
        if not isinstance(target, ast.Name)
        else [target.id]
    )


def _is_newaxis_index(node: ast.AST) -> bool:
    """`x[:, None]` / `x[None, :]`: broadcasting only makes sense on blocks."""
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(isinstance(e, ast.Constant) and e.value is None for e in elts) and any(
        isinstance(e, ast.Slice) for e in elts
    )


def _is_float_cast(ctx: KernelContext, call: ast.Call) -> bool:
    """`x.to(tl.float32)` / `tl.cast(x, tl.float16)` and the like."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        dtype = ctx.resolve(call.args[0]) or ""
    elif ctx.resolve(call.func) == TL + "cast" and len(call.args) >= 2:
        dtype = ctx.resolve(call.args[1]) or ""
    else:
        return False
    return dtype.startswith(TL + "float") or dtype.startswith(TL + "bfloat")


def _is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def free_names(node: ast.AST) -> set[str]:
    return {n.id for n in walk_nodes(node) if isinstance(n, ast.Name)}


def assigned_in(node: ast.AST) -> set[str]:
    """Names (re)bound anywhere inside `node` (assignments, loop targets, walrus)."""
    out: set[str] = set()
    for sub in walk_nodes(node):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                out.update(_names_in(target))
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            out.update(_names_in(sub.target))
    return out
