"""Scalar scan loop -> blocked scan: `tl.cumsum` / `tl.associative_scan` over blocks, the running value carried.

    acc = 0.0
    for i in range(start, stop):            # one element per iteration
        x = tl.load(x_row + i)
        acc += x                            # or acc = tl.maximum(acc, x) / tl.minimum / acc *= x
        tl.store(out_row + i, acc)          # the running value stored every iteration

becomes a loop over blocks of SCAN_BLOCK elements: the loop variable turns into a block of lanes (every access in
the body is masked to the range), the update becomes an in-block scan plus the value carried from the previous
blocks, later uses of the running value read the scanned block, and the carry is the block's reduction. Chosen
from the model: a running accumulation stored in its loop (classify: scan), every access in the loop affine.
Declines for loops that already step by blocks, carry more than the running value, or branch.
"""

from __future__ import annotations

import ast

from ...computation.classify import SCAN, Kind
from ...computation.model import Computation
from ..recipe_edits import and_mask, append_argument, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from .emit import (
    ScheduleRecipe,
    accesses_in,
    append_constexprs,
    names_in,
    node_text,
    region_text,
    reorderable_loop,
    require_affine,
    require_class,
)
from .targets import choices

# combine -> (identity text, in-block scan, block reduction); {tl} is the file's alias of triton.language
_COMBINES = {
    "sum": ("0.0", "{tl}.cumsum({x}, axis=0)", "{tl}.sum({x}, axis=0)", "{acc} + {y}"),
    "max": ('float("-inf")', "{tl}.associative_scan({x}, 0, {helper})", "{tl}.max({x}, axis=0)",
            "{tl}.maximum({acc}, {y})"),
    "min": ('float("inf")', "{tl}.associative_scan({x}, 0, {helper})", "{tl}.min({x}, axis=0)",
            "{tl}.minimum({acc}, {y})"),
    "product": ("1.0", "{tl}.cumprod({x}, axis=0)", "{tl}.reduce({x}, 0, {helper})", "{acc} * {y}"),
}
_HELPER_BODY = {"max": "{tl}.maximum(a, b)", "min": "{tl}.minimum(a, b)", "product": "a * b"}


def _update(ks: KernelSource, stmt: ast.stmt, acc: str) -> tuple[str, ast.expr] | None:
    """(combine, the new element's expression) of `acc += e`, `acc = acc + e`, `acc = tl.maximum(acc, e)` ..."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == acc:
        op = {ast.Add: "sum", ast.Mult: "product"}.get(type(stmt.op))
        return (op, stmt.value) if op else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == acc):
        return None
    value = stmt.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mult)):
        op = "sum" if isinstance(value.op, ast.Add) else "product"
        for mine, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(mine, ast.Name) and mine.id == acc and acc not in names_in(other):
                return op, other
    call = ks.tl_call(value)
    if call in ("maximum", "minimum") and len(value.args) == 2:
        for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
            if isinstance(mine, ast.Name) and mine.id == acc and acc not in names_in(other):
                return ("max" if call == "maximum" else "min"), other
    return None


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, SCAN)
    running = [a for a in comp.accumulations if a.stored_in_loop]
    if not running:
        raise Decline("the scan is already blocked (tl.cumsum / tl.associative_scan): no scalar scan loop")
    if len(running) > 1:
        raise Decline(f"more than one running value is stored in the loop ({', '.join(a.var for a in running)})")
    acc = running[0]
    var = comp.var(acc.loop)
    loop, start, stop, step = reorderable_loop(ks, var, {acc.var}, "scan")
    if step is not None and not (isinstance(step, ast.Constant) and step.value == 1):
        raise Decline(f"line {loop.lineno}: the loop steps by {ks.segment(step)}: already blocked")
    carried = [a for a in comp.accumulations if a.loop == acc.loop and a.var != acc.var]
    if carried:
        raise Decline(f"the loop carries more than the running value ({', '.join(a.var for a in carried)})")
    if any(isinstance(n, (ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.Return)) for s in loop.body
           for n in ast.walk(s)):
        raise Decline(f"line {loop.lineno}: the scan loop branches or nests loops")
    require_affine(accesses_in(comp, acc.loop))
    updates = [(i, s, u) for i, s in enumerate(loop.body) if (u := _update(ks, s, acc.var))]
    if len(updates) != 1:
        raise Decline(f"`{acc.var}` is not updated exactly once by a sum, product, maximum or minimum")
    at, update_stmt, (combine, element) = updates[0]
    if any(acc.var in names_in(s) for s in loop.body[:at]):
        raise Decline(f"`{acc.var}` is read before its update (an exclusive scan)")
    loop_var = loop.target.id
    tl = ks.tl
    step_name, scanned, ok = ks.fresh(f"{acc.var}_step"), ks.fresh(f"{acc.var}_scan"), ks.fresh(f"{loop_var}_ok")
    block_name = ks.fresh("SCAN_BLOCK")
    blk = ks.fresh(f"{loop_var}_block")
    helper = ks.fresh(f"_scan_{combine}")
    identity, scan_t, reduce_t, merge_t = _COMBINES[combine]
    needs_helper = combine in ("max", "min", "product")
    indent = ks.text.indent(loop.body[0])
    stop_text = ks.segment(stop)

    edits = []
    for node in ast.walk(loop):  # every access in the body covers the block: masked to the range
        if isinstance(node, ast.Call) and ks.is_tl(node, "load", "store"):
            edits.append(and_mask(ks, node, ok))
    # later reads of the running value in the body see the scanned block
    for s in loop.body[at + 1:]:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id == acc.var and isinstance(n.ctx, ast.Load):
                edits.append(ks.text.replace(n, scanned))
            elif isinstance(n, ast.Name) and n.id == acc.var:
                raise Decline(f"line {s.lineno}: `{acc.var}` is assigned again after its update")
    fmt = {"tl": ks.tl_alias, "helper": helper}
    new_update = (
        f"{indent}{step_name} = {tl('where')}({ok}, {node_text(ks, element, edits)}, {identity})\n"
        f"{indent}{scanned} = {merge_t.format(acc=acc.var, y=scan_t.format(x=step_name, **fmt), **fmt)}\n"
    )
    edits.append(ks.text.replace_statements(update_stmt, new_update))
    body = region_text(ks, loop.body[0], loop.body[-1], edits)
    carry = f"{indent}{acc.var} = {merge_t.format(acc=acc.var, y=reduce_t.format(x=step_name, **fmt), **fmt)}\n"
    header = (f"{ks.text.indent(loop)}for {blk} in range({ks.segment(start)}, {stop_text}, {block_name}):\n"
              f"{indent}{loop_var} = {blk} + {tl('arange')}(0, {block_name})\n"
              f"{indent}{ok} = {loop_var} < {stop_text}\n")
    loop_start, loop_end = ks.text.statement_lines(loop)
    from ..source_edit import Edit

    kernel_edits = [Edit(loop_start, loop_end, header + body + carry), append_constexprs(ks, [block_name])]
    if needs_helper:
        deco = "@triton.jit" if "triton" in ks.aliases and ks.aliases["triton"] == "triton" else None
        if deco is None:
            raise Decline("the file does not `import triton` (the scan's combine function needs @triton.jit)")
        at_def = min([d.lineno for d in ks.fn.decorator_list] + [ks.fn.lineno])
        helper_src = f"@triton.jit\ndef {helper}(a, b):\n    return {_HELPER_BODY[combine].format(**fmt)}\n\n\n"
        kernel_edits.append(Edit(ks.text.line_start(at_def), ks.text.line_start(at_def), helper_src))
    launches = launch_grids(ks)
    candidates = []
    for size in choices(ks.ctx.target).scan_blocks:
        edits = list(kernel_edits) + [append_argument(ks, call, f"{block_name}={size}") for call, _ in launches]
        rationale = (
            f"The loop on line {loop.lineno} scans one element per iteration (`{acc.var}` is a running "
            f"{combine} stored every step: the model classifies the kernel as a scan). It now walks blocks of "
            f"{size} elements: each block is scanned in registers ({scan_t.split('(')[0].format(**fmt)}), the "
            f"value of the earlier blocks is carried in `{acc.var}`, and every load and store moves a whole "
            "block instead of one element."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Blocked scan ({size} elements per step)", rationale,
                                 config={block_name: size}))
    return candidates


RECIPE = ScheduleRecipe(
    name="schedule-blocked-scan",
    title="Scan by blocks (tl.cumsum / associative_scan with a carried value)",
    build=_build,
)
