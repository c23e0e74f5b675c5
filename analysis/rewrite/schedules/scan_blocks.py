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
A running block (a block of columns scanned down the rows, a block of rows along the columns) is scanned by tiles of
iterations: the loop's lanes become a column (`[:, None]`) that the block broadcasts against. A linear recurrence
`h = a * h + b` is scanned as the composition of its steps (a, b). Declines for loops that already step by blocks, carry more than
the running value, branch, or move 2-D tiles.
"""

from __future__ import annotations

import ast

from ...computation.classify import SCAN, Kind
from ...computation.model import Computation
from ..recipe_edits import and_mask, append_argument, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from .emit import (
    LoopForm,
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
# a first-order linear recurrence h = a * h + b: the steps (a, b) compose associatively, first then second
_LINEAR_HELPER = "def {helper}(a1, b1, a2, b2):\n    return a1 * a2, b1 * a2 + b2\n"
_COMBINE_NAMES = {"linear": "linear recurrence (`a * h + b`)"}


def _update(ks: KernelSource, stmt: ast.stmt, acc: str) -> tuple[str, ast.expr] | None:
    """(combine, the new element's expression) of `acc += e`, `acc = acc + e`, `acc = tl.maximum(acc, e)` ..."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == acc:
        op = {ast.Add: "sum", ast.Mult: "product"}.get(type(stmt.op))
        return (op, stmt.value) if op else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == acc):
        return None
    value = stmt.value
    linear = _linear(value, acc) or _fused_linear(ks, value, acc)
    if linear is not None:
        return "linear", linear
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


def _linear(value: ast.expr, acc: str) -> ast.Tuple | None:
    """(a, b) of `a * acc + b` in any order of the terms and factors (a and b free of `acc`), as a tuple node."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for product, other in ((value.left, value.right), (value.right, value.left)):
        if acc in names_in(other) or not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            continue
        for mine, factor in ((product.left, product.right), (product.right, product.left)):
            if isinstance(mine, ast.Name) and mine.id == acc and acc not in names_in(factor):
                return ast.Tuple(elts=[factor, other])
    return None


def _fused_linear(ks: KernelSource, value: ast.expr, acc: str) -> ast.Tuple | None:
    """(a, b) of `tl.fma(a, acc, b)` / `tl.fma(acc, a, b)`: the same step written as one fused multiply-add."""
    if ks.tl_call(value) != "fma" or len(value.args) != 3 or value.keywords:
        return None
    x, y, term = value.args
    if acc in names_in(term):
        return None
    for mine, factor in ((x, y), (y, x)):
        if isinstance(mine, ast.Name) and mine.id == acc and acc not in names_in(factor):
            return ast.Tuple(elts=[factor, term])
    return None


def _linear_update(ks: KernelSource, indent: str, acc: str, ok: str, steps: ast.Tuple, edits: list,
                   helper: str, scanned: str) -> tuple[str, str]:
    """(the update's replacement, the carry after the block) of `acc = a * acc + b` over a block: the steps
    (a, b) are scanned with their composition, masked lanes taking the identity step (1, 0); each lane's value is
    A * acc + B of its scanned pair, and the block's composed step carries `acc` to the next block."""
    tl = ks.tl
    factor, term = steps.elts
    a, b = ks.fresh(f"{acc}_decay"), ks.fresh(f"{acc}_input")
    big_a, big_b, tot_a, tot_b = (ks.fresh(f"{acc}_{n}") for n in ("decay_scan", "input_scan", "decay_all",
                                                                     "input_all"))
    update = (
        f"{indent}{b} = {tl('where')}({ok}, {node_text(ks, term, edits)}, 0.0).to({tl('float32')})\n"
        f"{indent}{a} = {tl('where')}({ok}, {node_text(ks, factor, edits)}, "
        f"{tl('full')}({b}.shape, 1.0, {tl('float32')}))\n"
        f"{indent}{big_a}, {big_b} = {tl('associative_scan')}(({a}, {b}), 0, {helper})\n"
        f"{indent}{scanned} = {big_a} * {acc} + {big_b}\n"
    )
    carry = (f"{indent}{tot_a}, {tot_b} = {tl('reduce')}(({a}, {b}), 0, {helper})\n"
             f"{indent}{acc} = {tot_a} * {acc} + {tot_b}\n")
    return update, carry


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
    if isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub):
        raise LoopForm(f"line {loop.lineno}: the loop counts down (step {ks.segment(step)})")
    if step is not None and not (isinstance(step, ast.Constant) and step.value == 1):
        raise Decline(f"line {loop.lineno}: the loop steps by {ks.segment(step)}: already blocked")
    carried = [a for a in comp.accumulations if a.loop == acc.loop and a.var != acc.var]
    if carried:
        raise Decline(f"the loop carries more than the running value ({', '.join(a.var for a in carried)})")
    if any(isinstance(n, (ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.Return)) for s in loop.body
           for n in ast.walk(s)):
        raise Decline(f"line {loop.lineno}: the scan loop branches or nests loops")
    scanned_accesses = accesses_in(comp, acc.loop)
    require_affine(scanned_accesses)
    rank = max((len(a.dims) for a in scanned_accesses), default=0)
    if rank > 1:
        raise Decline(f"line {loop.lineno}: the scan loop moves tiles of {rank} axes (one row of columns at most)")
    columns = rank == 1  # a running block: each step takes a tile of iterations x the block
    updates = [(i, s, u) for i, s in enumerate(loop.body) if (u := _update(ks, s, acc.var))]
    if len(updates) != 1:
        raise Decline(f"`{acc.var}` is not updated exactly once by a sum, product, maximum, minimum or `a * "
                      f"{acc.var} + b`")
    at, update_stmt, (combine, element) = updates[0]
    if any(acc.var in names_in(s) for s in loop.body[:at]):
        raise Decline(f"`{acc.var}` is read before its update (an exclusive scan)")
    loop_var = loop.target.id
    tl = ks.tl
    step_name, scanned, ok = ks.fresh(f"{acc.var}_step"), ks.fresh(f"{acc.var}_scan"), ks.fresh(f"{loop_var}_ok")
    block_name = ks.fresh("SCAN_BLOCK")
    blk = ks.fresh(f"{loop_var}_block")
    helper = ks.fresh(f"_scan_{combine}")
    # a linear recurrence has its own update (_linear_update); it scans with associative_scan, as max does
    identity, scan_t, reduce_t, merge_t = _COMBINES.get(combine, _COMBINES["max"])
    needs_helper = combine in ("max", "min", "product", "linear")
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
    if combine == "linear":
        new_update, carry = _linear_update(ks, indent, acc.var, ok, element, edits, helper, scanned)
    else:
        new_update = (
            f"{indent}{step_name} = {tl('where')}({ok}, {node_text(ks, element, edits)}, {identity})\n"
            f"{indent}{scanned} = {merge_t.format(acc=acc.var, y=scan_t.format(x=step_name, **fmt), **fmt)}\n"
        )
        carry = f"{indent}{acc.var} = {merge_t.format(acc=acc.var, y=reduce_t.format(x=step_name, **fmt), **fmt)}\n"
    edits.append(ks.text.replace_statements(update_stmt, new_update))
    body = region_text(ks, loop.body[0], loop.body[-1], edits)
    header = (f"{ks.text.indent(loop)}for {blk} in range({ks.segment(start)}, {stop_text}, {block_name}):\n"
              f"{indent}{loop_var} = {blk} + {tl('arange')}(0, {block_name}){'[:, None]' if columns else ''}\n"
              f"{indent}{ok} = {loop_var} < {stop_text}\n")
    loop_start, loop_end = ks.text.statement_lines(loop)
    from ..source_edit import Edit

    kernel_edits = [Edit(loop_start, loop_end, header + body + carry), append_constexprs(ks, [block_name])]
    if needs_helper:
        deco = "@triton.jit" if "triton" in ks.aliases and ks.aliases["triton"] == "triton" else None
        if deco is None:
            raise Decline("the file does not `import triton` (the scan's combine function needs @triton.jit)")
        at_def = min([d.lineno for d in ks.fn.decorator_list] + [ks.fn.lineno])
        helper_src = "@triton.jit\n" + (_LINEAR_HELPER.format(helper=helper) if combine == "linear" else
                                         f"def {helper}(a, b):\n    return {_HELPER_BODY[combine].format(**fmt)}\n")
        helper_src += "\n\n"
        kernel_edits.append(Edit(ks.text.line_start(at_def), ks.text.line_start(at_def), helper_src))
    launches = launch_grids(ks)
    candidates = []
    target = choices(ks.ctx.target)
    unit = "iterations" if columns else "elements"
    for size in target.scan_rows if columns else target.scan_blocks:
        edits = list(kernel_edits) + [append_argument(ks, call, f"{block_name}={size}") for call, _ in launches]
        step_text = (f"tiles of {size} iterations of its block: each tile is scanned along the loop's axis in "
                     "registers" if columns else f"blocks of {size} elements: each block is scanned in registers")
        rationale = (
            f"The loop on line {loop.lineno} scans one {'block' if columns else 'element'} per iteration "
            f"(`{acc.var}` is a running {_COMBINE_NAMES.get(combine, combine)} stored every step: the model classifies "
            "the kernel as a scan). "
            f"It now walks {step_text} ({scan_t.split('(')[0].format(**fmt)}), the value of the earlier steps is "
            f"carried in `{acc.var}`, and every load and store moves {size} times as much per step."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Blocked scan ({size} {unit} per step)", rationale,
                                 config={block_name: size}))
    return candidates


RECIPE = ScheduleRecipe(
    name="schedule-blocked-scan",
    title="Scan by blocks (tl.cumsum / associative_scan with a carried value)",
    build=_build,
)
