"""Multiply by a reciprocal computed once instead of dividing every element by the same scalar.

`x / d` on a block is an IEEE-precise division per element (a multi-instruction sequence on NVIDIA, a slow vector
op on Ascend). When `d` is one scalar for the whole block, `inv_d = 1.0 / d` once and `x * inv_d` per element
cost one division in total. Results may differ from the division in the last bit (a multiply by a rounded
reciprocal).
"""

from __future__ import annotations

import ast

from ..kernel_patterns import arange_sizes, assigned_names, walk_statements
from ..recipe_edits import paren
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit


def _is_block(node: ast.AST, sizes: dict[str, set[str]], ks: KernelSource) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sizes.get(sub.id):
            return True
        if ks.is_tl(sub, "arange"):
            return True
    return False


def _bodies(ks: KernelSource) -> list[list[ast.stmt]]:
    return [ks.fn.body] + [
        inner
        for stmt, _ in walk_statements(ks.fn.body)
        for inner in (getattr(stmt, "body", None), getattr(stmt, "orelse", None))
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt)
    ]


def _holder(ks: KernelSource, node: ast.AST, body: list[ast.stmt]) -> int | None:
    """Index of the statement of `body` that contains `node`, if any."""
    while node is not None:
        if isinstance(node, ast.stmt):
            for index, stmt in enumerate(body):
                if stmt is node:
                    return index
        node = ks.parent(node)
    return None


def _guarded(ks: KernelSource, node: ast.AST, holder: ast.stmt) -> bool:
    """Whether `node` runs under an `if` inside `holder` (or `holder` is that `if`): a reciprocal placed before
    `holder` would run where the division does not (`if HAS_SOFTCAP: x / softcap` with `softcap` None)."""
    child, parent = node, ks.parent(node)
    while parent is not None and child is not holder:
        if isinstance(parent, ast.If) and child is not parent.test:
            return True
        child, parent = parent, ks.parent(parent)
    return False


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    sizes = arange_sizes(ks)
    groups: dict[str, list[ast.BinOp]] = {}
    reasons: list[str] = []
    for node in ast.walk(ks.fn):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Name)):
            continue
        name = node.right.id
        if not _is_block(node.left, sizes, ks):
            continue  # a scalar divided by a scalar: nothing to gain
        if sizes.get(name):
            reasons.append(f"line {node.lineno}: the divisor {name} is itself a block")
            continue
        groups.setdefault(name, []).append(node)

    # a division nested in another's numerator (`(x / t) / d`) is left for a second application
    chosen = [d for ds in groups.values() for d in ds]
    inner = {id(n) for d in chosen for n in ast.walk(d.left) if n is not d}
    groups = {k: kept for k, v in groups.items() if (kept := [d for d in v if id(d) not in inner])}
    bodies = _bodies(ks)
    edits: list[Edit] = []
    done: list[str] = []
    def placement(divisions: list[ast.BinOp], name: str) -> tuple[list[ast.stmt], int] | None:
        """The outermost statement list holding every division where nothing from the first holder on assigns
        the divisor and no division sits under an `if` below it: the reciprocal goes right before that holder
        (hoisted out of loops where possible, never out of the `if` that guards the division)."""
        for body in bodies:
            holders = [_holder(ks, d, body) for d in divisions]
            if None in holders or name in assigned_names(body[min(holders) :]):  # type: ignore[type-var]
                continue
            if any(_guarded(ks, d, body[h]) for d, h in zip(divisions, holders, strict=True)):  # type: ignore[index]
                continue
            return body, min(holders)  # type: ignore[type-var]
        return None

    for name, divisions in groups.items():
        # together when one place serves them all, else each under its own guard (`if HAS_SOFTCAP:` twice)
        together = placement(divisions, name)
        parts = [(divisions, together)] if together else [([d], placement([d], name)) for d in divisions]
        if any(where is None for _, where in parts):
            reasons.append(f"{name} changes between its divisions")
            continue
        for part, where in parts:
            body, first = where  # type: ignore[misc]
            inv = ks.fresh(f"inv_{name}")
            anchor = body[first]
            edits.append(ks.text.insert_before(anchor, f"{ks.text.indent(anchor)}{inv} = 1.0 / {name}\n"))
            for division in part:
                edits.append(ks.text.replace(division, f"{paren(ks.segment(division.left))} * {inv}"))
        done.append(f"`{name}` ({len(divisions)} division{'s' if len(divisions) > 1 else ''})")
    if not edits:
        raise Decline("; ".join(reasons) or "no block divided by a scalar")
    rationale = (
        f"Blocks were divided element by element by the scalar {', '.join(done)}. The reciprocal is now "
        "computed once and every element is multiplied by it (results can differ in the last bit)."
    )
    return [finish(recipe, ks.ctx, edits, "Multiply by a reciprocal instead of dividing every element", rationale)]


RECIPE = SourceRecipe(
    name="reciprocal-multiply",
    title="Multiply by a reciprocal instead of dividing every element",
    keys=("TL313", "TL108", "TL125", "TL129"),
    build=_build,
)
