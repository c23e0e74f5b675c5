"""Data flow facts of one jit function, for `KernelContext`: which names may hold blocks (tensors), values read
by `tl.load`, index blocks derived from `tl.arange`, per-program scalars from `tl.program_id`."""

from __future__ import annotations

import ast
from functools import cached_property

from ..kernels import KernelInfo
from .context_names import BLOCK_MAKERS, NOT_INDEX, TL, is_newaxis_index


class DataflowFacts:
    """Part of `context.KernelContext` (its fields and caches are the context's)."""

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
                or (isinstance(sub, ast.Subscript) and is_newaxis_index(sub.slice))
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
        return any(isinstance(n, ast.Subscript) and is_newaxis_index(n.slice) for n in self.nodes)

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
                if resolved in NOT_INDEX or _is_float_cast(self, sub):
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
                        isinstance(n, ast.Subscript) and is_newaxis_index(n.slice) for n in self.walk(value)
                    )
                    if broadcast or (refs & self.index_names) - out:
                        out.discard(name)
                        changed = True
                        break
        return out


def _is_float_cast(ctx: DataflowFacts, call: ast.Call) -> bool:
    """`x.to(tl.float32)` / `tl.cast(x, tl.float16)` and the like."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        dtype = ctx.resolve(call.args[0]) or ""
    elif ctx.resolve(call.func) == TL + "cast" and len(call.args) >= 2:
        dtype = ctx.resolve(call.args[1]) or ""
    else:
        return False
    return dtype.startswith(TL + "float") or dtype.startswith(TL + "bfloat")
