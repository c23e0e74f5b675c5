"""Block ranks inferred from the source, shared by triage rules that tell scalars, vectors and tiles apart.
No rules here."""

from __future__ import annotations

import ast

from .context import KernelContext
from .context_names import TL

REDUCTIONS = {TL + n for n in ("sum", "max", "min", "reduce", "xor_sum", "argmax", "argmin")}


def rank(ctx: KernelContext, node: ast.AST, depth: int = 0) -> int:
    """Number of block dimensions of a value, inferred syntactically: `tl.arange` is 1-D, `v[:, None]` 2-D, a
    reduction with `axis` drops one, without it gives a scalar; loads take their pointer's rank, elementwise
    math the largest of its operands, a local name that of its reaching assignment(s). Parameters are scalars."""
    if isinstance(node, ast.Constant) or depth > 8:
        return 0
    if isinstance(node, ast.Subscript):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(e, ast.Constant) and e.value is None for e in elts):
            return len(elts)
        return rank(ctx, node.value, depth + 1)
    if isinstance(node, ast.Call):
        name = ctx.resolve(node.func)
        if name == TL + "arange":
            return 1
        if (
            name in (TL + "zeros", TL + "full")
            and node.args
            and isinstance(node.args[0], (ast.Tuple, ast.List))
        ):
            return len(node.args[0].elts)
        if name in REDUCTIONS:
            has_axis = len(node.args) > 1 or any(
                k.arg == "axis" and not _is_none(k.value) for k in node.keywords
            )
            inner = rank(ctx, node.args[0], depth + 1) if node.args else 0
            return max(inner - 1, 0) if has_axis else 0
        if ctx.load_call(node) is node:
            pointer = ctx.pointer_arg(node)
            return rank(ctx, pointer, depth + 1) if pointer is not None else 0
        parts = [*node.args, *(k.value for k in node.keywords if k.arg not in ("dtype", "axis"))]
        if isinstance(node.func, ast.Attribute) and name is None:
            parts.append(node.func.value)  # x.to(...)
        return max((rank(ctx, p, depth + 1) for p in parts), default=0)
    if isinstance(node, ast.Name):
        if node.id in ctx.params:
            return 0
        values = ctx.reaching(node.id, statement(ctx, node))  # `x = x.to(...)`: the x before this line
        return max((rank(ctx, v, depth + 1) for v in values), default=0)
    return max((rank(ctx, c, depth + 1) for c in ast.iter_child_nodes(node)), default=0)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def statement(ctx: KernelContext, node: ast.AST) -> ast.AST:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parent(current)
    return current if current is not None else node
