"""Which grid axes (`tl.program_id(a)`) a value depends on, through assignments and loaded values.

Two programs that differ only along an axis a value does not depend on see the same value: an operand whose axes
are a subset of another's is never shared by programs that differ in the other (TL133: a vector per program
against tiles only that program reads). Syntactic and conservative: every assignment of a name counts, a
non-literal axis counts as its own axis (-1).
"""

from __future__ import annotations

import ast

from .context import KernelContext
from .context_names import TL


def program_axes(ctx: KernelContext, node: ast.AST) -> frozenset[int]:
    """The program-id axes `node`'s value depends on (directly, or through the names it reads)."""
    per_name = _per_name(ctx)
    out = set(_direct(ctx, node))
    for name in ctx.names_of(node):
        out |= per_name.get(name, frozenset())
    return frozenset(out)


def _per_name(ctx: KernelContext) -> dict[str, frozenset[int]]:
    cached = ctx.memo.get("program_axes")
    if cached is None:
        axes: dict[str, set[int]] = {name: set() for name in ctx.assigns}
        for name, values in ctx.assigns.items():
            for value in values:
                axes[name] |= _direct(ctx, value)
        changed = True
        while changed:  # a fixed point over the (finite) names: each pass only adds axes
            changed = False
            for name, values in ctx.assigns.items():
                for value in values:
                    for ref in ctx.names_of(value):
                        extra = axes.get(ref, set()) - axes[name]
                        if extra:
                            axes[name] |= extra
                            changed = True
        cached = ctx.memo["program_axes"] = {name: frozenset(a) for name, a in axes.items()}
    return cached


def _direct(ctx: KernelContext, node: ast.AST) -> set[int]:
    out: set[int] = set()
    for sub in ctx.walk(node):
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) == TL + "program_id":
            arg = sub.args[0] if sub.args else next((k.value for k in sub.keywords if k.arg == "axis"), None)
            out.add(arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, int) else -1)
    return out
