"""Row or column reduction -> the reduced loop split over a second grid axis, partials combined with atomics.

A reduction whose programs each walk a long loop over the reduced axis has few programs when there are few outputs:
a column reduction (`x.sum(0)`, `x.max(0)`, a mean over the rows) with N=4096 columns in blocks of 64 gets 64
programs on a 132-SM device; a row reduction over a few long rows (`x.sum(dim=(1, 2))` of a (4, 512, 512) tensor:
4 programs) leaves almost every SM idle. Here the loop over the reduced axis is cut into contiguous slices, one per
program on grid axis 1 (`tl.num_programs(1)` of them, each slice a whole number of the loop's steps so the user's
masks stay right); each program reduces its slice exactly as before and combines its result into the output with
`tl.atomic_add` (sum) or `tl.atomic_max` / `tl.atomic_min`. The wrapper initialises the output to the combine's
identity before the launch and chooses the number of slices at run time so that the grid fills the device (the
programs that fill it are a guess from the target's device table, named in the rationale). The slices combine in
an fp32 buffer where the output is fp16/bf16 (Triton has no fp16 atomic max/min; a max or min taken in fp32 is
exact, a sum is rounded to the output's dtype once, after the launch, as before).

Chosen from the model: the kernel is a row or column reduction (classify), one loop-carried sum/max/min over the
reduced loop, one store after the loop whose value is linear in the sum (a mean, a scale, `tl.sum` of a block
accumulator) or the reduced max/min itself. Declines for other epilogues (sqrt, division by the sum: atomics cannot
combine them), grids with a second axis, stores in the loop, outputs that are not a plain tensor name at the
launch, and kernels whose profiled grid already fills the device.
"""

from __future__ import annotations

import ast

from ...computation.classify import COLUMN_REDUCTION, ROW_REDUCTION, Kind
from ...computation.model import Computation
from ..kernel_patterns import literal_init
from ..recipe_edits import imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from ..source_edit import Edit
from .emit import (
    ScheduleRecipe,
    access_call,
    launch_argument,
    names_in,
    one_axis_grid,
    reorderable_loop,
    require_class,
)
from .targets import SMS_GUESS, choices, measured_grid

MAX_SPLIT = 64  # more slices add atomics without adding bandwidth
_ATOMIC = {"sum": "atomic_add", "max": "atomic_max", "min": "atomic_min"}
_IDENTITY = {"sum": 0.0, "max": float("-inf"), "min": float("inf")}
_FILL = {"sum": ".zero_()", "max": '.fill_(float("-inf"))', "min": '.fill_(float("inf"))'}


def _init_value(ks: KernelSource, node: ast.expr) -> float | None:
    """The constant an accumulator starts from: `0.0`, `tl.zeros(...)`, `tl.full(shape, v, ...)`."""
    if ks.is_tl(node, "zeros", "zeros_like"):
        return 0.0
    if ks.is_tl(node, "full") and len(node.args) >= 2:
        return literal_init(node.args[1])
    return literal_init(node)


def _combines(ks: KernelSource, node: ast.expr, tainted: set[str], op: str) -> bool:
    """The expression is built from the accumulator so that combining partial results gives the same answer:
    linear for a sum (sums, casts, +/- and scaling by values free of it), the max/min itself for max/min."""
    if not (names_in(node) & tainted):
        return True
    if isinstance(node, ast.Name):
        return True
    call = ks.tl_call(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        return _combines(ks, node.func.value, tainted, op)
    if op == "sum":
        if call == "sum" and node.args:
            return _combines(ks, node.args[0], tainted, op)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return _combines(ks, node.operand, tainted, op)
        if isinstance(node, ast.BinOp):
            left, right = (bool(names_in(n) & tainted) for n in (node.left, node.right))
            if isinstance(node.op, (ast.Add, ast.Sub)):
                return left and right and all(_combines(ks, n, tainted, op) for n in (node.left, node.right))
            if isinstance(node.op, ast.Mult) and left != right:
                return _combines(ks, node.left if left else node.right, tainted, op)
            if isinstance(node.op, ast.Div) and left and not right:
                return _combines(ks, node.left, tainted, op)
        return False
    return call == op and bool(node.args) and _combines(ks, node.args[0], tainted, op)


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, COLUMN_REDUCTION, ROW_REDUCTION)
    target = choices(ks.ctx.target)
    fill = target.programs_to_fill
    measured = measured_grid(ks.ctx)
    if measured is not None and measured >= fill:
        raise Decline(f"the profiled grid already has {measured:,} programs (about {fill} fill the device): "
                      "splitting the loop adds atomics without filling it more")
    if any(v.name.startswith("pid") and v.name != "pid0" for v in comp.index_vars):
        raise Decline("the kernel already uses a second grid axis")
    if any(isinstance(n, ast.Call) and ks.is_tl(n, "num_programs") for n in ast.walk(ks.fn)):
        raise Decline("the kernel reads tl.num_programs (its grid is part of its logic)")
    accs = [a for a in comp.accumulations if a.loop in kind.reduced_over and a.op in _ATOMIC]
    if len(accs) != 1:
        raise Decline("no single sum/max/min accumulated over the reduced loop" if not accs
                      else f"more than one value is accumulated over the reduced loop ({', '.join(a.var for a in accs)})")
    acc = accs[0]
    others = [a for a in comp.accumulations if a.loop == acc.loop and a.var != acc.var]
    if others:
        raise Decline(f"the loop also carries {', '.join(a.var for a in others)}")
    loop, start, stop, step = reorderable_loop(ks, comp.var(acc.loop), acc.var, "reduction")
    if not any(loop is s for s in ks.fn.body):
        raise Decline(f"line {loop.lineno}: the reduction loop is nested (not at the top of the kernel)")
    stores = comp.stores
    if len(stores) != 1 or stores[0].kind != "store" or acc.loop in stores[0].in_loops:
        raise Decline("the kernel does not store its result once, after the reduction loop")
    store = access_call(ks, stores[0])
    if any(k.arg != "mask" for k in store.keywords) or len(store.args) > 3:
        raise Decline(f"line {store.lineno}: the store has options an atomic does not take")
    # the value stored must combine across slices; follow the names computed from the accumulator after the loop
    at = ks.fn.body.index(loop)
    init = next((s for s in reversed(ks.fn.body[:at]) if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == acc.var), None)
    # each slice starts from the initial value again: harmless for max/min, wrong for a sum unless it is 0
    if init is None or (acc.op == "sum" and _init_value(ks, init.value) != _IDENTITY["sum"]):
        raise Decline(f"`{acc.var}` does not start from the identity of its sum "
                      "(each slice would count the start again)")
    tainted = {acc.var}
    for s in ks.fn.body[at + 1:]:
        if isinstance(s, ast.Assign) and names_in(s.value) & tainted:
            if not _combines(ks, s.value, tainted, acc.op):
                raise Decline(f"line {s.lineno}: `{ks.segment(s.value)}` does not combine across slices")
            tainted |= {n for t in s.targets for n in names_in(t)}
        elif not isinstance(s, ast.Assign) and s is not ks.enclosing_statement(store) and names_in(s) & tainted:
            raise Decline(f"line {s.lineno}: the reduced value is used by a statement the schedule cannot split")
    value = store.args[1] if len(store.args) > 1 else next((k.value for k in store.keywords if k.arg == "value"), None)
    if value is None or not _combines(ks, value, tainted, acc.op):
        raise Decline(f"line {store.lineno}: the stored value does not combine across slices")

    tl, var = ks.tl, loop.target.id
    chunk, first = ks.fresh(f"{var}_slice"), ks.fresh(f"{var}_first")
    indent = ks.text.indent(loop)
    step_text = ks.segment(step) if step is not None else "1"
    start_text, stop_text = ks.segment(start), ks.segment(stop)
    zero_start = isinstance(start, ast.Constant) and start.value == 0
    span = stop_text if zero_start else f"{stop_text} - {start_text}"
    steps = span if step is None else f"{tl('cdiv')}({span}, {step_text})"
    per_slice = f"{tl('cdiv')}({steps}, {tl('num_programs')}(1))" + ("" if step is None else f" * {step_text}")
    offset = f"{tl('program_id')}(1) * {chunk}" if zero_start else f"{start_text} + {tl('program_id')}(1) * {chunk}"
    header = (
        f"{indent}# the reduced axis is split over grid axis 1: this program reduces one slice of it\n"
        f"{indent}{chunk} = {per_slice}\n"
        f"{indent}{first} = {offset}\n"
    )
    bound = f"{tl('minimum')}({first} + {chunk}, {stop_text})"
    new_range = f"range({first}, {bound})" if step is None else f"range({first}, {bound}, {step_text})"
    edits = [
        ks.text.insert_before(loop, header),
        ks.text.replace(loop.iter, new_range),
        ks.text.replace(store.func, tl(_ATOMIC[acc.op])),
    ]
    torch = imported_as(ks, "torch")
    splits, partial = ks.fresh("row_splits"), ks.fresh("combined")
    for call, _ in launch_grids(ks):
        grid0 = one_axis_grid(ks, call)
        out = launch_argument(ks, call, stores[0].tensor)
        if not isinstance(out, ast.Name):
            raise Decline(f"line {call.lineno}: the output is passed as `{ks.segment(out)}`, not a tensor name")
        statement = ks.enclosing_statement(call)
        ind = ks.text.indent(statement)
        # the slices combine in fp32 whatever the output's dtype: Triton has fp32 atomics for add, max and min
        # (not fp16/bf16 max and min), and a max/min of fp16 values taken in fp32 is exactly one of them
        edits.append(ks.text.insert_before(statement, (
            f"{ind}{partial} = {out.id} if {out.id}.dtype == {torch}.float32 else "
            f"{torch}.empty_like({out.id}, dtype={torch}.float32)\n"
            f"{ind}{partial}{_FILL[acc.op]}  # the slices of the reduced axis combine into it ({_ATOMIC[acc.op]})\n"
            f"{ind}{splits} = max(1, min({MAX_SPLIT}, {fill} // max(1, {grid0})))\n")))
        edits.append(ks.text.replace(call.func.slice, f"({grid0}, {splits})"))
        edits.append(ks.text.replace(out, partial))
        edits.append(ks.text.insert_after(statement, (
            f"{ind}if {partial} is not {out.id}:\n{ind}    {out.id}.copy_({partial})  # one rounding to its dtype\n")))
    walked = "a strided axis" if kind.name == COLUMN_REDUCTION else "its contiguous axis"
    units = f"the Ascend target's {fill} AI cores" if target.ascend else f"{SMS_GUESS} SMs of the sm_9x entry"
    rationale = (
        f"The kernel reduces `{stores[0].tensor}`'s input over {walked} (the model classifies it as a {kind.name}) "
        f"with one program per output block, each walking the whole loop on line {loop.lineno}: few outputs leave "
        f"the device idle. The loop is now split into slices over grid axis 1, chosen at launch so the grid reaches "
        f"about {fill} programs (**guess:** {units} of the device table, unless profiled); each slice's {acc.op} is "
        f"combined into the output with `tl.{_ATOMIC[acc.op]}` (the output is set to the identity first; an output "
        "that is not fp32 gets an fp32 buffer for the combine, copied into it once after the launch)."
    )
    return [finish(recipe, ks.ctx, [e for e in edits if isinstance(e, Edit)],
                   "Split the reduced axis over a second grid axis (atomic combine)", rationale,
                   config={"max_split": MAX_SPLIT})]


RECIPE = ScheduleRecipe(
    name="schedule-reduction-split",
    title="Reduction loop split over a second grid axis",
    build=_build,
)
