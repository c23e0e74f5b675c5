"""Recognising a recipe's pattern in the kernel's AST: names read and written, statements and loops, `range`
loops, literal initialisers, additive updates, `tl.load` operands, whole-block reductions, the launch grid, and the
`tl.arange` block sizes an expression is built from (a crude shape inference good enough to spot 1D blocks).
Anything that is not exactly what a recipe handles raises `Decline` with the reason."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from .recipe_kit import Decline, KernelSource

REDUCTIONS = ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum")


def loaded_names(node: ast.AST | list[ast.AST]) -> set[str]:
    nodes = node if isinstance(node, list) else [node]
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name)}


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def walk_statements(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
    """Every statement with the body list that holds it, outer first."""
    for stmt in body:
        yield stmt, body
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from walk_statements(inner)


def first_loop_match(
    ks: KernelSource, try_at: Callable[[list[ast.stmt], int], list | None], nothing: str
) -> list:
    """try_at(body, i) at every `for` of the kernel, outer bodies first: the first match, or Decline with every
    loop's reason (or `nothing` when no loop said why)."""
    reasons = []
    bodies = [ks.fn.body] + [s.body for s, _ in walk_statements(ks.fn.body) if isinstance(s, ast.For | ast.While | ast.If)]
    for body in bodies:
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.For):
                try:
                    found = try_at(body, i)
                except Decline as exc:
                    reasons.append(str(exc))
                    continue
                if found:
                    return found
    raise Decline("; ".join(reasons) or nothing)


def simple_range(loop: ast.For) -> tuple[ast.expr, ast.expr, ast.expr | None] | None:
    """(start, stop, step) of `for v in range(...)` / `tl.range(...)` with a Name target, else None."""
    call = loop.iter
    if not isinstance(loop.target, ast.Name) or not isinstance(call, ast.Call) or call.keywords:
        return None
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name != "range" or not 1 <= len(call.args) <= 3 or loop.orelse:
        return None
    args = call.args
    if len(args) == 1:
        return ast.Constant(0), args[0], None
    return args[0], args[1], args[2] if len(args) == 3 else None


def literal_init(node: ast.AST) -> float | None:
    """The value of `0.0`, `0`, `-float("inf")`, `float("-inf")`, `-1e30` style initialisers."""
    try:
        value = ast.literal_eval(node)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    except (ValueError, SyntaxError, TypeError):
        pass
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1.0, node.operand
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        try:
            return sign * float(node.args[0].value)
        except ValueError:
            return None
    return None


def previous_assignment(body: list[ast.stmt], before: ast.stmt, name: str) -> ast.stmt | None:
    """The last statement of `body` ahead of `before` that assigns `name` (anywhere inside it)."""
    found = None
    for stmt in body:
        if stmt is before:
            return found
        if name in assigned_names([stmt]):
            found = stmt
    return None


def count_name(nodes: list[ast.AST], name: str) -> int:
    return sum(1 for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and n.id == name)


def additive_update(stmt: ast.stmt) -> tuple[str, ast.AST] | None:
    """(acc, value) for `acc += value` and `acc = acc + value`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, ast.Add)
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        return stmt.targets[0].id, stmt.value.right
    return None


def add_terms(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of `+` (not `-`: a subtracted term keeps its sign only inside the chain)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return add_terms(node.left) + add_terms(node.right)
    return [node]


def uncast(node: ast.AST) -> ast.AST:
    """The value under `.to(...)` casts (`tl.load(p).to(tl.float32)` -> the load)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        node = node.func.value
    return node


def is_zero(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, 0.0) and not isinstance(node.value, bool)


def load_parts(ks: KernelSource, call: ast.Call) -> tuple[ast.AST, ast.AST | None, ast.AST | None]:
    """(pointer, mask, other) of a tl.load call; Decline on any other argument."""
    names = ("pointer", "mask", "other")
    parts: dict[str, ast.AST] = dict(zip(names, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg not in names or kw.arg in parts:
            raise Decline(f"line {call.lineno}: tl.load with `{kw.arg}`")
        parts[kw.arg] = kw.value
    if len(call.args) > 3 or "pointer" not in parts:
        raise Decline(f"line {call.lineno}: unexpected tl.load arguments")
    return parts["pointer"], parts.get("mask"), parts.get("other")


def axis_zero(ks: KernelSource, call: ast.Call) -> bool:
    """A reduction call over the whole of a 1D block: one positional operand, axis 0/None, nothing else."""
    args, keywords = call.args, call.keywords
    if len(args) == 2 and not keywords:
        return isinstance(args[1], ast.Constant) and args[1].value in (0, None)
    if len(args) != 1:
        return False
    if not keywords:
        return True
    return len(keywords) == 1 and keywords[0].arg == "axis" and isinstance(keywords[0].value, ast.Constant) and (
        keywords[0].value.value in (0, None)
    )


def arange_sizes(ks: KernelSource) -> dict[str, set[str]]:
    """For each name of the kernel: the sizes (source text) of the tl.arange blocks its value is built from,
    and "2d" when it was broadcast with None (a crude shape inference good enough to spot 1D blocks)."""
    sizes: dict[str, set[str]] = {}

    def of(expr: ast.AST) -> set[str]:
        return _sizes_of(ks, expr, sizes)

    for _ in range(2):  # loops feed names back into earlier statements
        for stmt, _body in walk_statements(ks.fn.body):
            if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                found = of(stmt.value)
                for target in targets:
                    for name in loaded_names(target):
                        sizes.setdefault(name, set()).update(found)
    return sizes


def _sizes_of(ks: KernelSource, expr: ast.AST, sizes: dict[str, set[str]]) -> set[str]:
    def of(expr: ast.AST) -> set[str]:
        out: set[str] = set()
        if ks.is_tl(expr, *REDUCTIONS):
            inner = set().union(*(of(arg) for arg in expr.args[:1]))
            return {"2d"} if "2d" in inner else set()  # a 1D block reduces to a scalar
        if ks.is_tl(expr, "arange") and len(expr.args) == 2:
            return {ks.segment(expr.args[1])}
        if isinstance(expr, ast.Name):
            return set(sizes.get(expr.id, set()))
        if isinstance(expr, ast.Subscript) and "None" in ks.segment(expr.slice):
            out.add("2d")
        elif ks.is_tl(expr, "zeros", "full") and expr.args:
            out.add("2d")  # explicit shapes: not followed
        for child in ast.iter_child_nodes(expr):
            out |= of(child)
        return out

    return of(expr)


def one_d_size(ks: KernelSource, expr: ast.AST, sizes: dict[str, set[str]]) -> str | None:
    """The block size of a 1D block expression, when exactly one tl.arange size feeds it and nothing is 2D."""
    found = _sizes_of(ks, expr, sizes)
    return next(iter(found)) if len(found) == 1 and "2d" not in found else None


def grid_node(ks: KernelSource, call: ast.Call) -> ast.AST:
    """The grid expression of `kernel[grid](...)`, following a name assigned once in the same function."""
    grid = call.func.slice
    if isinstance(grid, ast.Name):
        scope = ks.enclosing_statement(call)
        while scope is not None and not isinstance(scope, ast.FunctionDef | ast.Module):
            scope = ks.parent(scope)
        assigns = [
            n for n in ast.walk(scope or ks.tree)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == grid.id for t in n.targets)
        ]
        if len(assigns) != 1:
            raise Decline(f"the grid {grid.id} is not assigned exactly once")
        return assigns[0].value
    return grid
