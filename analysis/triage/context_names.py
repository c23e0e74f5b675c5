"""Names and node shapes the kernel context and the triage rules share: the canonical `triton.language` names
they look for (loop iterators, block makers, calls that give data rather than indices, atomics) and small
predicates over nodes (names bound or read, `x[:, None]` broadcasts)."""

from __future__ import annotations

import ast
from typing import Any

from ..kernels import walk_nodes

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
NOT_INDEX = {
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


def bare_names(node: ast.AST) -> set[str]:
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


def names_in(target: ast.AST) -> list[str]:
    return (
        [n.id for n in walk_nodes(target) if isinstance(n, ast.Name)]
        if not isinstance(target, ast.Name)
        else [target.id]
    )


def is_newaxis_index(node: ast.AST) -> bool:
    """`x[:, None]` / `x[None, :]`: broadcasting only makes sense on blocks."""
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(isinstance(e, ast.Constant) and e.value is None for e in elts) and any(
        isinstance(e, ast.Slice) for e in elts
    )


def is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def free_names(node: ast.AST) -> set[str]:
    return {n.id for n in walk_nodes(node) if isinstance(n, ast.Name)}


def assigned_in(node: ast.AST) -> set[str]:
    """Names (re)bound anywhere inside `node` (assignments, loop targets, walrus)."""
    out: set[str] = set()
    for sub in walk_nodes(node):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                out.update(names_in(target))
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            out.update(names_in(sub.target))
    return out
