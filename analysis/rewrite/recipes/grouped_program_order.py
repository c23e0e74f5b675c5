"""Grouped (swizzled) program order for tiled matmul-like kernels on a 2D grid.

With `pid_m = tl.program_id(0); pid_n = tl.program_id(1)` programs run in launch order: a full sweep along one
axis before the other advances, so consecutive programs share no operand tiles and L2 reuse is poor. The two
ids are recomputed from the linear launch order in groups of GROUP rows (the Triton matmul tutorial's scheme):
a bijection on the same grid, so the kernel computes the same tiles, in an L2-friendlier order. It applies to
kernels with a K loop feeding tl.dot or outer-product updates and two adjacent program-id assignments.
"""

from __future__ import annotations

import ast

from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish

GROUP = 8


def _pid_assignment(ks: KernelSource, stmt: ast.stmt) -> tuple[str, int] | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if ks.is_tl(call, "program_id") and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
        return stmt.targets[0].id, call.args[0].value
    if ks.is_tl(call, "program_id") and len(call.keywords) == 1 and isinstance(call.keywords[0].value, ast.Constant):
        return stmt.targets[0].id, call.keywords[0].value.value
    return None


def _tiled(ks: KernelSource) -> bool:
    for node in ast.walk(ks.fn):
        if ks.is_tl(node, "dot"):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            texts = ks.segment(node.left), ks.segment(node.right)
            if any("[:, None]" in t for t in texts) and any("[None, :]" in t for t in texts):
                return any(isinstance(n, ast.For) for n in ast.walk(ks.fn))
    return False


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    if not _tiled(ks):
        raise Decline("no K loop feeding tl.dot or outer-product updates: program order does not matter here")
    if any(ks.is_tl(n, "num_programs") for n in ast.walk(ks.fn)):
        raise Decline("the kernel already reads tl.num_programs (a custom program order)")
    body = ks.fn.body
    for i in range(len(body) - 1):
        first, second = _pid_assignment(ks, body[i]), _pid_assignment(ks, body[i + 1])
        if first and second and {first[1], second[1]} == {0, 1}:
            break
    else:
        raise Decline("no adjacent `x = tl.program_id(0)` / `y = tl.program_id(1)` at the top of the kernel")
    names = {axis: name for name, axis in (first, second)}
    if sum(isinstance(n, ast.Call) and ks.is_tl(n, "program_id") for n in ast.walk(ks.fn)) != 2:
        raise Decline("tl.program_id is read elsewhere in the kernel")
    a, b = names[0], names[1]
    tl = ks.tl
    lin, span, first_a, size_a = (ks.fresh(n) for n in ("pid_linear", "group_span", f"first_{a}", f"group_{a}"))
    indent = ks.text.indent(body[i])
    lines = [
        f"{lin} = {tl('program_id')}(0) + {tl('program_id')}(1) * {tl('num_programs')}(0)",
        f"{span} = {GROUP} * {tl('num_programs')}(1)",
        f"{first_a} = ({lin} // {span}) * {GROUP}",
        f"{size_a} = {tl('minimum')}({tl('num_programs')}(0) - {first_a}, {GROUP})",
        f"{a} = {first_a} + ({lin} % {span}) % {size_a}",
        f"{b} = ({lin} % {span}) // {size_a}",
    ]
    edit = ks.text.replace_statements(body[i], "".join(f"{indent}{line}\n" for line in lines), body[i + 1])
    rationale = (
        f"`{a}` and `{b}` came straight from the 2D grid, so consecutive programs sweep a whole row of tiles. "
        f"They are now derived from the launch order in groups of {GROUP} along axis 0, so programs running "
        "together reuse the same operand tiles from L2. Same tiles, different order."
    )
    return [finish(recipe, ks.ctx, [edit], f"Grouped program order (groups of {GROUP})", rationale,
                   config={"GROUP": GROUP})]


RECIPE = SourceRecipe(
    name="grouped-program-order",
    title="Grouped (swizzled) program order for L2 reuse",
    keys=("TL133", "TL209", "TL202", "TL306"),
    build=_build,
)
