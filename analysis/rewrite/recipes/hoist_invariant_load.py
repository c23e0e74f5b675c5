"""Move a load that reads the same address on every iteration out of the loop.

A `x = tl.load(ptr, ...)` (or the load under casts, `.to(...)`) whose address, mask and other value use nothing the loop changes is issued once per
iteration for one value. It moves right before the loop. It declines when the loop stores to memory reachable
from the same pointer (the value could change) or reads the name before the load.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import assigned_names, count_name, loaded_names, uncast
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit, reindent

_WRITES = ("store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and",
           "atomic_or", "atomic_xor")


def _roots(ks: KernelSource, expr: ast.AST) -> set[str]:
    """Pointer parameters an address expression is built from."""
    params = {p.name for p in ks.info.params}
    names = loaded_names(expr)
    return names & params


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    edits: list[Edit] = []
    reasons: list[str] = []
    moved = []
    for loop in ast.walk(ks.fn):
        if not isinstance(loop, ast.For):
            continue
        changing = assigned_names(loop.body) | loaded_names(loop.target)
        written = set()
        for node in ast.walk(loop):
            if ks.is_tl(node, *_WRITES) and node.args:
                written |= _roots(ks, node.args[0]) or {"?"}
        hoist = []
        for index, stmt in enumerate(loop.body):
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and ks.is_tl(uncast(stmt.value), "load")
            ):
                continue
            name = stmt.targets[0].id
            if loaded_names(stmt.value) & changing:
                continue  # depends on the loop
            line = f"line {stmt.lineno}"
            if "?" in written or _roots(ks, stmt.value) & written:
                reasons.append(f"{line}: the loop stores through a pointer the load may read")
                continue
            if sum(1 for s in loop.body if name in assigned_names([s])) != 1 or count_name(loop.body[:index], name):
                reasons.append(f"{line}: {name} is assigned again or read before the load in the loop")
                continue
            hoist.append(stmt)
        if not hoist:
            continue
        indent = ks.text.indent(loop)
        # whole lines move (a trailing comment goes with its load), re-indented to the loop's level
        try:
            block = "".join(
                reindent(ks.text.source[slice(*ks.text.statement_lines(stmt))], ks.text.indent(stmt), indent)
                for stmt in hoist
            )
        except ValueError:
            raise Decline("a load spans lines with irregular indentation") from None
        edits.append(ks.text.insert_before(loop, block))
        for stmt in hoist:
            start, end = ks.text.statement_lines(stmt)
            edits.append(Edit(start, end, ""))
            moved.append(f"`{stmt.targets[0].id}` (line {stmt.lineno})")
        if len(hoist) == len(loop.body):
            raise Decline("every statement of the loop would move: the loop would be empty")
    if not edits:
        raise Decline("; ".join(reasons) or "no loop-invariant load inside a loop")
    rationale = (
        f"The loads of {', '.join(moved)} read the same address on every iteration; each is now issued once "
        "before its loop. Assumes the loop's stores do not write what these loads read (checked by pointer "
        "parameter)."
    )
    return [finish(recipe, ks.ctx, edits, "Hoist loop-invariant loads out of the loop", rationale)]


RECIPE = SourceRecipe(
    name="hoist-invariant-load",
    title="Hoist loop-invariant loads out of the loop",
    keys=("TL106", "TL314"),
    build=_build,
)
