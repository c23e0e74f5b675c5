"""Accumulate a vector inside the loop and reduce it once after the loop.

`acc += tl.sum(x, axis=0)` inside a loop runs a block reduction (shuffles, shared memory, barriers) every
iteration. Keeping one partial per lane (`acc += x`) and reducing once after the loop does the same arithmetic
with one reduction in total. Also `acc = tl.maximum(acc, tl.max(x, axis=0))` and the minimum form.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    arange_sizes,
    axis_zero,
    count_name,
    literal_init,
    one_d_size,
    previous_assignment,
    walk_statements,
)
from ..recipe_edits import block_size_text, paren
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

# reduction -> the elementwise combine that replaces it inside the loop
_COMBINE = {"sum": None, "max": "maximum", "min": "minimum"}


def _update(ks: KernelSource, stmt: ast.stmt) -> tuple[str, str, ast.Call] | None:
    """(accumulator, reduction, reduction call) for the update forms this recipe understands."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
        if ks.is_tl(stmt.value, "sum"):
            return stmt.target.id, "sum", stmt.value
        return None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    acc, value = stmt.targets[0].id, stmt.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        for mine, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(mine, ast.Name) and mine.id == acc and ks.is_tl(other, "sum"):
                return acc, "sum", other
    for reduction, combine in (("max", "maximum"), ("min", "minimum")):
        if ks.is_tl(value, combine) and len(value.args) == 2 and not value.keywords:
            for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
                if isinstance(mine, ast.Name) and mine.id == acc and ks.is_tl(other, reduction):
                    return acc, reduction, other
    return None


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    sizes = arange_sizes(ks)
    edits: list[Edit] = []
    reasons: list[str] = []
    changed: list[str] = []
    for loop, body in walk_statements(ks.fn.body):
        if not isinstance(loop, ast.For | ast.While):
            continue
        after: list[str] = []
        for stmt in loop.body:
            found = _update(ks, stmt)
            if found is None:
                continue
            acc, reduction, call = found
            line = f"line {stmt.lineno}"
            if not axis_zero(ks, call):
                reasons.append(f"{line}: tl.{reduction} with an axis or options other than axis=0")
                continue
            if count_name(loop.body, acc) != count_name([stmt], acc):
                reasons.append(f"{line}: {acc} is used elsewhere in the loop")
                continue
            init = previous_assignment(body, loop, acc)
            if not (isinstance(init, ast.Assign) and len(init.targets) == 1) or literal_init(init.value) is None:
                reasons.append(f"{line}: {acc} is not initialised with a literal right before the loop")
                continue
            size = one_d_size(ks, call.args[0], sizes)
            if size is None:
                reasons.append(f"{line}: cannot tell that the reduced value is a 1D block of one size")
                continue
            size = block_size_text(ks, size)
            value = literal_init(init.value)
            # an int literal keeps integer accumulation (a count stays exact)
            exact = isinstance(init.value, ast.Constant) and type(init.value.value) is int
            dtype = ks.tl("int32" if exact else "float32")
            if value == 0.0:
                new_init = f"{ks.tl('zeros')}([{size}], dtype={dtype})"
            else:
                new_init = f"{ks.tl('full')}([{size}], {ks.segment(init.value)}, dtype={dtype})"
            edits.append(ks.text.replace(init.value, new_init))
            operand = ks.segment(call.args[0])
            edits.append(ks.text.replace(call, operand if isinstance(stmt, ast.AugAssign) else paren(operand)))
            after.append(f"{acc} = {ks.tl(reduction)}({acc}, axis=0)")
            changed.append(f"`{acc}` (line {stmt.lineno})")
        if after:
            indent = ks.text.indent(loop)
            edits.append(ks.text.insert_after(loop, "".join(f"{indent}{line}\n" for line in after)))
    if not edits:
        raise Decline("; ".join(reasons) or "no block reduction accumulated inside a loop")
    rationale = (
        f"The loop reduced a block every iteration into {', '.join(changed)}. Each lane now keeps its own "
        "partial and the block is reduced once after the loop: the same arithmetic, one reduction instead of "
        "one per iteration (the summation order changes, so float sums differ in the last bits)."
    )
    return [finish(recipe, ks.ctx, edits, "Accumulate a vector in the loop, reduce once after it", rationale)]


RECIPE = SourceRecipe(
    name="vector-accumulator",
    title="Accumulate a vector in the loop, reduce once after it",
    keys=("TL125", "TL107", "TL108"),
    build=_build,
)
