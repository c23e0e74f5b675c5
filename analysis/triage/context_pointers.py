"""Pointer facts of one jit function, for `KernelContext`: the expressions an address is built from, the
parameters a pointer derives from, integer parameters and the constexpr guards around a node."""

from __future__ import annotations

import ast
from functools import cached_property

from .context_names import TL


class PointerFacts:
    """Part of `context.KernelContext` (its fields and caches are the context's)."""

    def address_exprs(self, pointer: ast.AST) -> list[ast.AST]:
        """The pointer expression and the values that reach the local names it is built from (flow-aware:
        the assignment before each use, so a reused name is not confused with its other values). Loads are
        data, not addresses; a call to a jit helper that is handed a pointer is opaque (its result is not built
        from the loaded values among its arguments: a helper that returns a pointer is not a gather).
        Computed once per pointer node (most rules ask for the same loads' and stores' pointers); callers must
        not change the list."""
        cached = self._address_exprs.get(id(pointer))
        if cached is None or cached[0] is not pointer:
            cached = self._address_exprs[id(pointer)] = (pointer, self._find_address_exprs(pointer))
        return cached[1]

    @cached_property
    def _address_exprs(self) -> dict[int, tuple[ast.AST, list[ast.AST]]]:
        return {}  # id(pointer) -> (pointer, its address_exprs): holding the node, its id is never reused

    def _find_address_exprs(self, pointer: ast.AST) -> list[ast.AST]:
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
