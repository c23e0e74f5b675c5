"""Row or column reduction -> the reduced loop split over a second grid axis, the slices' partials combined.

A reduction whose programs each walk a long loop over the reduced axis has few programs when there are few outputs:
a column reduction (`x.sum(0)`, `x.std(0)`, a mean over the rows) with N=4096 columns in blocks of 64 gets 64
programs on a 132-SM device; a row reduction over a few long rows (`x.sum(dim=(1, 2))` of a (4, 512, 512) tensor:
4 programs; per-channel statistics of an NCHW batch: C programs) leaves almost every SM idle. Here the first
top-level loop that accumulates over the reduced axis is cut into contiguous slices, one per program on the first
grid axis the kernel does not use (axis 1, or axis 2 when the outputs take two; `tl.num_programs(axis)` slices,
each a whole number of the loop's steps so the user's masks stay right), and each program reduces its slice
exactly as before. The slices' results combine in one of two ways:

- one sum/max/min whose stored value is linear in it (a sum, a mean, a scale) or the max/min itself: straight
  into the output with `tl.atomic_add` / `tl.atomic_max` / `tl.atomic_min`, the output set to the identity first
  (an fp32 buffer for fp16/bf16 outputs: Triton has no fp16 atomic max/min, and a sum is then rounded once);
- a rest that holds loops of its own (a pass that normalises, a second reduction pass): kernel fission, one
  launch per reduction pass and one to finish, chosen by a new `PHASE` constexpr; each launch's partials go into
  a workspace the later launches read, and the last launch's loops are split over the slices too;
- a running max with sums kept relative to it (an online softmax; decode attention's denominator and P@V, which
  makes this flash decoding) or a best value and its index chosen under one condition (an argmax): each slice
  stores its state and the states are folded with the loop's own step (online_pairs.py, select_steps.py);
- several accumulators (a sum and a sum of squares), or an epilogue that does not combine (a square root, a
  division by the sum): through a workspace, the last slice to arrive reading the totals back and running the
  rest of the kernel as written (`split_combine.py`). Not emitted for Ascend, where the ordering across AI cores
  cannot be checked without a device (the launch-per-pass form needs none and is emitted there).

The wrapper chooses the number of slices at run time so that the grid fills the device (the programs that fill
it are a guess from the target's device table, named in the rationale). Declines for grids of three axes,
stores in the split loop, other loop-carried values, outputs that are not a plain tensor name at the launch
(direct form), and kernels whose profiled grid already fills the device.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...computation.classify import ATTENTION, COLUMN_REDUCTION, ROW_REDUCTION, Kind
from ...computation.model import Accumulation, Computation
from ..kernel_patterns import assigned_names, literal_init, simple_range
from ..recipe_edits import append_argument, imported_as, launch_grids, paren
from ..recipe_kit import Decline, KernelSource, finish
from ..source_edit import Edit, reindent
from .emit import (
    ScheduleRecipe,
    access_call,
    append_constexprs,
    constexpr_params,
    free_names,
    grid_axes,
    launch_argument,
    names_in,
    node_text,
    region_text,
    reorderable_loop,
    require_class,
    span_text,
)
from .online_pairs import OnlinePair, fold_slices, online_pairs
from .select_steps import SelectStep, fold_selects, select_steps
from .split_combine import (
    ATOMIC,
    Partial,
    accumulator_layout,
    combine_per_launch,
    combine_then_finish,
    dead_starts,
    has_return,
    indented_rest,
    program_slot,
    workspace_lines,
)
from .targets import SMS_GUESS, choices, measured_grid

MAX_SPLIT = 64  # more slices add atomics without adding bandwidth
_IDENTITY = {"sum": 0.0, "max": float("-inf"), "min": float("inf")}
_PHASE_MARK = "\x00phase\x00"  # where each copy of a launch gets its phase literal
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


def _split_loop(ks: KernelSource, comp: Computation, kind: Kind) -> tuple[ast.For, list[Accumulation]]:
    """The first loop at the top of the kernel that accumulates over the reduced axis, and what it carries."""
    top = {s.lineno: s for s in ks.fn.body if isinstance(s, ast.For)}
    reducing = [a for a in comp.accumulations if a.loop in kind.reduced_over]
    outer = sorted((a for a in reducing if comp.var(a.loop) is not None and comp.var(a.loop).line in top),
                   key=lambda a: comp.var(a.loop).line)
    if not outer:
        raise Decline("no value is accumulated over the reduced loop" if not reducing
                      else f"line {comp.var(reducing[0].loop).line}: the reduction loop is nested (not at the top "
                      "of the kernel)")
    loop = top[comp.var(outer[0].loop).line]
    accs = [a for a in comp.accumulations if a.loop == outer[0].loop]
    other = [a for a in accs if a.op not in (*ATOMIC, "select")]
    if other:
        raise Decline(f"the loop also carries {', '.join(a.var for a in other)} (not a sum, max, min or a select)")
    return loop, accs


def _plain_updates(ks: KernelSource, loop: ast.For, acc: Accumulation) -> None:
    """Every write of the accumulator in the loop is `acc += e`, `acc = acc + e` (sum) or `acc = tl.maximum(acc,
    e)` (max/min) with `e` free of it, and the loop reads it nowhere else: then a slice's partial is the same
    reduction over fewer iterations. A running value rescaled as it goes (`s = s * alpha + e`, an online softmax)
    is not, and is declined."""
    own: set[int] = set()
    for node in ast.walk(loop):
        if not (isinstance(node, (ast.Assign, ast.AugAssign)) and acc.var in names_in(
                node.target if isinstance(node, ast.AugAssign) else ast.Tuple(node.targets, ast.Store()))):
            continue
        operand = _update_operand(ks, node, acc)
        if operand is None or acc.var in names_in(operand):
            raise Decline(f"line {node.lineno}: `{ks.segment(node)}` is not a plain {acc.op} update of `{acc.var}`")
        own |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == acc.var}
    if any(isinstance(n, ast.Name) and n.id == acc.var and id(n) not in own for n in ast.walk(loop)):
        raise Decline(f"the loop on line {loop.lineno} reads `{acc.var}` while accumulating it")


def _update_operand(ks: KernelSource, node: ast.Assign | ast.AugAssign, acc: Accumulation) -> ast.expr | None:
    """The value combined into `acc` by one update statement, or None when the statement is not such an update."""
    if isinstance(node, ast.AugAssign):
        ok = isinstance(node.target, ast.Name) and isinstance(node.op, (ast.Add, ast.Sub)) and acc.op == "sum"
        return node.value if ok else None
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    value = node.value
    if acc.op == "sum" and isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        if isinstance(value.left, ast.Name) and value.left.id == acc.var:
            return value.right
        if isinstance(value.op, ast.Add) and isinstance(value.right, ast.Name) and value.right.id == acc.var:
            return value.left
        return None
    wanted = {"max": "maximum", "min": "minimum"}.get(acc.op)
    if wanted and ks.is_tl(value, wanted) and len(value.args) == 2 and not value.keywords:
        names = [isinstance(a, ast.Name) and a.id == acc.var for a in value.args]
        if names.count(True) == 1:
            return value.args[names.index(False)]
    return None


def _initial(ks: KernelSource, loop: ast.For, acc: Accumulation) -> ast.Assign:
    """The statement that starts an accumulator before the loop; a sum must start from 0 (each slice starts over)."""
    at = ks.fn.body.index(loop)
    init = next((s for s in reversed(ks.fn.body[:at]) if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == acc.var), None)
    if init is None or (acc.op == "sum" and _init_value(ks, init.value) != _IDENTITY["sum"]):
        raise Decline(f"`{acc.var}` does not start from the identity of its sum "
                      "(each slice would count the start again)")
    return init


def _direct_store(ks: KernelSource, comp: Computation, loop: ast.For, accs: list[Accumulation]) -> ast.Call:
    """The one store whose value combines across slices by an atomic on the output, or Decline with why not."""
    if len(accs) != 1:
        raise Decline(f"{len(accs)} values are accumulated ({', '.join(a.var for a in accs)})")
    acc = accs[0]
    stores = comp.stores
    if len(stores) != 1 or stores[0].kind != "store":
        raise Decline("the kernel does not store its result once, after the reduction loop")
    store = access_call(ks, stores[0])
    if any(k.arg != "mask" for k in store.keywords) or len(store.args) > 3:
        raise Decline(f"line {store.lineno}: the store has options an atomic does not take")
    # the value stored must combine across slices; follow the names computed from the accumulator after the loop
    at = ks.fn.body.index(loop)
    after = ks.fn.body[at + 1:]
    compound = next((s for s in after if not isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr))), None)
    if compound is not None:
        raise Decline(f"line {compound.lineno}: the kernel does more after the loop than compute the stored value")
    tainted = {acc.var}
    for s in after:
        if isinstance(s, ast.Assign) and names_in(s.value) & tainted:
            if not _combines(ks, s.value, tainted, acc.op):
                raise Decline(f"line {s.lineno}: `{ks.segment(s.value)}` does not combine across slices")
            tainted |= {n for t in s.targets for n in names_in(t)}
        elif not isinstance(s, ast.Assign) and s is not ks.enclosing_statement(store) and names_in(s) & tainted:
            raise Decline(f"line {s.lineno}: the reduced value is used by a statement the schedule cannot split")
    value = store.args[1] if len(store.args) > 1 else next((k.value for k in store.keywords if k.arg == "value"), None)
    if value is None or not _combines(ks, value, tainted, acc.op):
        raise Decline(f"line {store.lineno}: the stored value does not combine across slices")
    if not names_in(value) & tainted:  # every slice would add its own copy of it
        raise Decline(f"line {store.lineno}: the stored value does not depend on `{acc.var}`")
    return store


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, COLUMN_REDUCTION, ROW_REDUCTION, ATTENTION)  # attention: an online group over the keys
    target = choices(ks.ctx.target)
    fill = target.programs_to_fill
    measured = measured_grid(ks.ctx)
    if measured is not None and measured >= fill:
        raise Decline(f"the profiled grid already has {measured:,} programs (about {fill} fill the device): "
                      "splitting the loop adds atomics without filling it more")
    axis = split_axis(comp)
    if any(isinstance(n, ast.Call) and ks.is_tl(n, "num_programs") for n in ast.walk(ks.fn)):
        raise Decline("the kernel reads tl.num_programs (its grid is part of its logic)")
    loop, accs = _split_loop(ks, comp, kind)
    loop, start, stop, step = reorderable_loop(ks, comp.var(accs[0].loop), {a.var for a in accs}, "reduction")
    inits = {a.var: _initial(ks, loop, a) for a in accs}
    if kind.name == ATTENTION:
        tiles = [a.var for a in accs if len(accumulator_layout(ks, inits[a.var].value).dims) > 1]
        if tiles:
            raise Decline(f"a block of queries per program (`{tiles[0]}` is a tile): its grid already has a program "
                          "per query block; only one query per program (decoding) has its keys split")
    pairs = online_pairs(ks, loop, accs)  # a running max with a sum relative to it: combined by folding slots
    steps = select_steps(ks, loop, accs)  # a best value and its index chosen together: folded alike
    paired = {v for p in pairs for v in p.variables} | {v for st in steps for v in st.vars}
    for a in accs:
        if a.var not in paired:
            _plain_updates(ks, loop, a)
    if any(accs[0].loop in s.in_loops for s in comp.stores):
        raise Decline(f"line {loop.lineno}: the reduction loop stores (each slice would store a partial)")
    # a value the loop leaves behind (its last iteration's offsets, say) would come from one slice's last iteration
    at = ks.fn.body.index(loop)
    left = (assigned_names([loop]) - {a.var for a in accs}) & set(free_names(ks.fn.body[at + 1:]))
    if left:
        raise Decline(f"line {loop.lineno}: {', '.join(sorted(left))} is set in the reduction loop and read after it")

    busy: dict[str, str] = {}
    loop_edits = _sliced(ks, loop, (start, stop, step), f"the reduced axis is split over grid axis {axis}: this "
                         "program reduces one slice of it", axis, busy)
    try:
        store = _direct_store(ks, comp, loop, accs)
    except Decline as why_not:
        return _through_workspace(recipe, ks, comp, kind, loop, accs, inits, loop_edits, fill, target, str(why_not),
                                  pairs, steps, busy)
    return _straight_into_output(recipe, ks, comp, kind, loop, accs[0], store, loop_edits, fill, target)


_ORDINAL = {1: "second", 2: "third"}


def split_axis(comp: Computation) -> int:
    """The grid axis the slices go on: the first the kernel does not use (its programs over the outputs keep the
    axes before it)."""
    # a program id and what is derived from it (`pid0 // NH`, `pid0 % NH`) use the same axis
    used = {int(v.name[3]) for v in comp.index_vars if v.name.startswith("pid") and v.name[3:4].isdigit()}
    if used <= {0}:
        return 1
    if used == {0, 1}:
        return 2
    raise Decline(f"the kernel already uses grid axes {', '.join(map(str, sorted(used)))}: no free axis")


def output_program(ks: KernelSource, axis: int) -> str:
    """Kernel text of the program's linear index over the output axes (the grid axes before `axis`)."""
    tl = ks.tl
    if axis == 1:
        return f"{tl('program_id')}(0)"
    return f"({tl('program_id')}(0) * {tl('num_programs')}(1) + {tl('program_id')}(1))"


def _count(axes: list[str]) -> str:
    return " * ".join(paren(a) for a in axes) if len(axes) > 1 else axes[0]


def _sliced(ks: KernelSource, loop: ast.For, bounds: tuple[ast.expr, ast.expr, ast.expr | None], why: str,
            axis: int, busy: dict[str, str] | None = None) -> list:
    """Edits that give this program a contiguous slice of the loop's steps, one slice per program on grid `axis`
    (a whole number of steps each, so the user's masks stay right). `busy` receives, under "count", the kernel text
    of how many slices get at least one step (the others keep their start values)."""
    start, stop, step = bounds
    tl, var = ks.tl, loop.target.id
    chunk, first = ks.fresh(f"{var}_slice"), ks.fresh(f"{var}_first")
    indent = ks.text.indent(loop)
    step_text = ks.segment(step) if step is not None else "1"
    start_text, stop_text = ks.segment(start), ks.segment(stop)
    zero_start = isinstance(start, ast.Constant) and start.value == 0
    span = stop_text if zero_start else f"{stop_text} - {start_text}"
    steps = span if step is None else f"{tl('cdiv')}({span}, {step_text})"
    per_slice = f"{tl('cdiv')}({steps}, {tl('num_programs')}({axis}))" + ("" if step is None else f" * {step_text}")
    own = f"{tl('program_id')}({axis}) * {chunk}"
    offset = own if zero_start else f"{start_text} + {own}"
    header = f"{indent}# {why}\n{indent}{chunk} = {per_slice}\n{indent}{first} = {offset}\n"
    bound = f"{tl('minimum')}({first} + {chunk}, {stop_text})"
    if busy is not None:
        busy["count"] = f"{tl('minimum')}({tl('num_programs')}({axis}), {tl('cdiv')}({span}, {per_slice}))"
    new_range = f"range({first}, {bound})" if step is None else f"range({first}, {bound}, {step_text})"
    return [ks.text.insert_before(loop, header), ks.text.replace(loop.iter, new_range)]


def _straight_into_output(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind, loop: ast.For,
                          acc: Accumulation, store: ast.Call, edits: list, fill: int, target) -> list:  # noqa: ANN001
    edits = [*edits, ks.text.replace(store.func, ks.tl(ATOMIC[acc.op]))]
    value = store.args[1] if len(store.args) > 1 else next((k.value for k in store.keywords if k.arg == "value"), None)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
        # the slices meet in fp32 (below): a cast to the output's dtype here would round every slice's partial
        # before the sum; the copy into the output after the launch rounds once
        edits.append(ks.text.replace(value, ks.segment(value.func.value)))
    torch = imported_as(ks, "torch")
    splits, partial = ks.fresh("row_splits"), ks.fresh("combined")
    output = comp.stores[0].tensor
    axis = split_axis(comp)
    for call, _ in launch_grids(ks):
        axes = grid_axes(ks, call, axis)
        grid0 = _count(axes)
        out = launch_argument(ks, call, output)
        if not isinstance(out, ast.Name):
            raise Decline(f"line {call.lineno}: the output is passed as `{ks.segment(out)}`, not a tensor name")
        statement = ks.enclosing_statement(call)
        ind = ks.text.indent(statement)
        # the slices combine in fp32 whatever the output's dtype: Triton has fp32 atomics for add, max and min
        # (not fp16/bf16 max and min), and a max/min of fp16 values taken in fp32 is exactly one of them
        edits.append(ks.text.insert_before(statement, (
            f"{ind}{partial} = {out.id} if {out.id}.dtype == {torch}.float32 else "
            f"{torch}.empty_like({out.id}, dtype={torch}.float32)\n"
            f"{ind}{partial}{_FILL[acc.op]}  # the slices of the reduced axis combine into it ({ATOMIC[acc.op]})\n"
            f"{ind}{splits} = max(1, min({MAX_SPLIT}, {fill} // max(1, {grid0})))\n")))
        edits.append(ks.text.replace(call.func.slice, f"({', '.join(axes)}, {splits})"))
        edits.append(ks.text.replace(out, partial))
        edits.append(ks.text.insert_after(statement, (
            f"{ind}if {partial} is not {out.id}:\n{ind}    {out.id}.copy_({partial})  # one rounding to its dtype\n")))
    walked = "a strided axis" if kind.name == COLUMN_REDUCTION else "its contiguous axis"
    rationale = (
        f"The kernel reduces `{output}`'s input over {walked} (the model classifies it as a {kind.name}) "
        f"with one program per output block, each walking the whole loop on line {loop.lineno}: few outputs leave "
        f"the device idle. The loop is now split into slices over grid axis {axis}, chosen at launch so the grid reaches "
        f"about {fill} programs (**guess:** {_units(target, fill)} of the device table, unless profiled); each "
        f"slice's {acc.op} is combined into the output with `tl.{ATOMIC[acc.op]}` (the output is set to the "
        "identity first; an output that is not fp32 gets an fp32 buffer for the combine, copied into it once after "
        "the launch)."
    )
    return [finish(recipe, ks.ctx, [e for e in edits if isinstance(e, Edit)],
                   f"Split the reduced axis over a {_ORDINAL[axis]} grid axis (atomic combine)", rationale,
                   config={"max_split": MAX_SPLIT})]


def _through_workspace(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind, loop: ast.For,
                       accs: list[Accumulation], inits: dict[str, ast.Assign], edits: list, fill: int, target,  # noqa: ANN001
                       why_not_direct: str, pairs: list[OnlinePair], steps: list[SelectStep],
                       busy: dict[str, str]) -> list:
    at = ks.fn.body.index(loop)
    before, rest = ks.fn.body[:at], ks.fn.body[at + 1:]
    if any(ks.tl_call(n) in ("store",) or (ks.tl_call(n) or "").startswith("atomic_") for s in before
           for n in ast.walk(s)):
        raise Decline("the kernel writes memory before the reduction loop (every slice would write it)")
    if not rest or has_return(rest):
        raise Decline("nothing after the reduction loop to finish, or an early return")
    layouts = _layouts(ks, inits, accs)
    axis = split_axis(comp)
    program = output_program(ks, axis)
    partials = _partials(ks, accs, layouts, inits, pairs, steps, program, axis, busy.get("count", ""))
    slot_names: dict[str, str] = {}
    for p in partials:
        slot_names.setdefault(p.slot, ks.fresh("slot") if not slot_names else ks.fresh(f"{p.var}_slot"))
    names = {"finishes": ks.fresh("finishes"), **{p.var: slot_names[p.slot] for p in partials}}
    passes, tail, why_alone = _passes(ks, comp, rest)
    if not why_alone:  # launches order the passes: no ordering inside a launch to trust, Ascend included
        return _launch_per_pass(recipe, ks, comp, kind, loop, rest, partials, dict(layouts), names, passes, tail,
                                edits, fill, target, why_not_direct, {v for st in steps for v in st.vars})
    if target.ascend:
        raise Decline(f"{why_not_direct}; {why_alone}: the last slice to arrive would finish alone, an ordering "
                      "across AI cores that no Ascend device here can check")
    arrivals = ks.fresh("arrivals")
    indent = ks.text.indent(loop)
    first, last = ks.text.statement_lines(rest[0], rest[-1])
    rest_text = ks.text.source[first:last]
    edits.append(Edit(first, last, combine_then_finish(ks, indent, partials, arrivals, program, axis, names)
                      + indented_rest(rest_text, indent)))
    edits.append(append_constexprs(ks, [*(p.workspace for p in partials), arrivals], constexpr=False))
    dropped = dead_starts(ks, loop, rest)
    edits += [ks.text.replace_statements(s, "") for s in dropped]

    _, sites = _workspace_launches(ks, comp, partials, layouts, arrivals, fill, f"{arrivals}={arrivals}")
    for statement, lines, inside in sites:
        edits += [ks.text.insert_before(statement, lines), *inside]
    walked = "a strided axis" if kind.name == COLUMN_REDUCTION else "its contiguous axis"
    carried = ", ".join(f"`{a.var}` ({a.op})" for a in accs)
    rationale = (
        f"The kernel reduces over {walked} (the model classifies it as a {kind.name}) with one program per output "
        f"block, each walking the whole loop on line {loop.lineno}: few outputs leave the device idle. The loop is "
        f"now split into slices over grid axis {axis}, chosen at launch so the grid reaches about {fill} programs "
        f"(**guess:** {_units(target, fill)} of the device table, unless profiled). Its partials ({carried}) cannot "
        f"go straight into the output ({why_not_direct}), so each slice adds them into a workspace and the last "
        "slice to arrive reads the totals back and runs the rest of the kernel as written (the statements after "
        f"the loop, under `if`; {why_alone}). One slice (a grid that already fills the device) skips the "
        "workspace."
    )
    rationale += _online_note(partials, {v for st in steps for v in st.vars})
    if dropped:
        rationale += (" Dropped: " + ", ".join(f"`{ks.segment(s)}` (line {s.lineno})" for s in dropped) +
                      ", a start value the rest overwrites before reading it (Triton would refuse to merge its "
                      "type with the new value's under the `if`).")
    return [finish(recipe, ks.ctx, [e for e in edits if isinstance(e, Edit)],
                   f"Split the reduced axis over a {_ORDINAL[axis]} grid axis ({len(accs)} partial(s) combined, the last "
                   "slice finishes)", rationale, config={"max_split": MAX_SPLIT})]


def _partials(ks: KernelSource, accs: list[Accumulation], layouts: dict, inits: dict[str, ast.Assign],
              pairs: list[OnlinePair], steps: list[SelectStep], program: str, axis: int, busy: str) -> list[Partial]:
    """One workspace per accumulator: a total the slices add into, or (an online pair, a select step) a slot per
    slice, folded over the `busy` slices (an empty one holds only start values, which the user's step need not
    accept)."""
    tl = ks.tl
    workspaces = {a.var: ks.fresh(f"{a.var}_partials") for a in accs}
    paired = {v: p for p in pairs for v in p.variables}
    last = {p.max_var: [a.var for a in accs if a.var in p.variables][-1] for p in pairs}  # carries the fold
    stepped = {v: st for st in steps for v in st.vars}
    slices = f"{tl('num_programs')}({axis})"
    out = []
    for a in accs:
        dims = [ks.segment(d) for d in layouts[a.var].dims]
        step = stepped.get(a.var)
        if step is not None:
            own = program_slot(tl, f"({program} * {slices} + {tl('program_id')}({axis}))", dims)
            fold = "" if a.var != step.vars[-1] else fold_selects(
                ks, step, {v: ks.segment(inits[v].value) for v in step.vars}, {v: workspaces[v] for v in step.vars},
                program_slot(tl, f"({program} * {slices} + {{k}})", dims), ks.fresh("each_slice"), busy)
            out.append(Partial(a.var, "online", workspaces[a.var], own, dtype=layouts[a.var].dtype, fold=fold))
            continue
        pair = paired.get(a.var)
        if pair is None:
            out.append(Partial(a.var, a.op, workspaces[a.var], program_slot(tl, program, dims),
                               dtype=layouts[a.var].dtype))
            continue
        own = program_slot(tl, f"({program} * {slices} + {tl('program_id')}({axis}))", dims)
        fold = "" if a.var != last[pair.max_var] else fold_slices(
            ks, pair, {v: ks.segment(inits[v].value) for v in pair.variables},
            {v: workspaces[v] for v in pair.variables},
            {v: program_slot(tl, f"({program} * {slices} + {{k}})", [ks.segment(d) for d in layouts[v].dims])
             for v in pair.variables}, ks.fresh("each_slice"), busy)
        out.append(Partial(a.var, "online", workspaces[a.var], own, dtype=layouts[a.var].dtype, fold=fold))
    return out


def _online_note(partials: list[Partial], selected: set[str]) -> str:
    online = [p.var for p in partials if p.op == "online" and p.var not in selected]
    chosen = [p.var for p in partials if p.var in selected]
    note = ""
    if online:
        note += (f" {' and '.join(f'`{v}`' for v in online)} are a running maximum and a sum kept relative to it "
                 "(an online softmax's statistics): slices with different maxima do not add up, so each slice stores "
                 "its own pair and they are folded with the loop's own step (its statements copied), a slice's state "
                 "standing in for a block.")
    if chosen:
        note += (f" {' and '.join(f'`{v}`' for v in chosen)} are chosen together under one condition (a best value "
                 "and its index): no atomic keeps them together, so each slice stores its own state and they are "
                 "folded in slice order with the loop's own condition and selects, a slice's state standing in for "
                 "the block's candidates; the slices are contiguous and met in ascending order, so the loop's tie "
                 "rule holds.")
    return note


@dataclass
class _Pass:
    """A later loop that reduces again (a variance's sum of squared deviations after the mean, a softmax's sum
    after its max): split like the first, its partials combined in a launch of their own."""

    loop: ast.For
    accs: list[Accumulation]
    pre: list[ast.stmt]  # the straight-line statements between the previous pass and this loop


def _passes(ks: KernelSource, comp: Computation, rest: list[ast.stmt]) -> tuple[list[_Pass], list[ast.stmt], str]:
    """The statements after the split loop as further reduction passes and a tail, when all of them can run in
    slices, one launch per pass: ([passes], tail, "") or ([], [], why the last slice runs them alone). A later
    loop carrying plain sums/max/min is a pass; the tail's loops must carry nothing (a normalising pass), so that
    every slice can take a share of their iterations."""
    passes: list[_Pass] = []
    pending: list[ast.stmt] = []
    for s in rest:
        if any((ks.tl_call(n) or "").startswith("atomic_") for n in ast.walk(s)):
            return [], [], f"line {s.lineno}: the rest uses atomics, which every slice would repeat"
        if not isinstance(s, ast.For) and any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(s)):
            return [], [], f"line {s.lineno}: a loop nested in a compound statement (it would not be split)"
        if isinstance(s, ast.For) and simple_range(s) is None:
            return [], [], f"line {s.lineno}: the loop after it is not a plain range()"
        # read before it is set in an iteration and set in it: a value carried from one iteration to the next
        carried = set(free_names(s.body)) & assigned_names(s.body) if isinstance(s, ast.For) else set()
        if not carried:
            pending.append(s)
            continue
        try:
            accs = _later_pass(ks, comp, s, carried, pending)
        except Decline as why:
            return [], [], str(why)
        passes.append(_Pass(s, accs, pending))
        pending = []
    loops = [s for s in pending if isinstance(s, ast.For)]
    if not passes and not loops:
        return [], [], "no loop follows it, so the rest is short"
    for p in passes:
        if any(isinstance(s, ast.For) for s in p.pre):
            return [], [], f"line {p.loop.lineno}: a loop runs between two reductions (each launch would repeat it)"
    for lp in loops:
        left = assigned_names([lp]) & set(free_names(pending[pending.index(lp) + 1:]))
        if left:
            return [], [], f"line {lp.lineno}: {', '.join(sorted(left))} is set in the loop after it and read later"
    span = {ln for s in rest for ln in _lines(s)}
    stored = {a.tensor for a in comp.stores if a.line in span}
    for a in comp.loads:
        if a.line in span and a.tensor in stored:
            home = next(s for s in rest if a.line in _lines(s))
            if any(st.tensor == a.tensor and st.line not in _lines(home) for st in comp.stores if st.line in span):
                return [], [], f"line {a.line}: the rest reads {a.tensor}, which another of its statements writes"
    return passes, pending, ""


def _later_pass(ks: KernelSource, comp: Computation, loop: ast.For, carried: set[str],
                pre: list[ast.stmt]) -> list[Accumulation]:
    """What a later loop accumulates, or Decline when it is not a reduction that splits like the first."""
    var = next((v for v in comp.index_vars if v.line == loop.lineno), None)
    accs = [a for a in comp.accumulations if var is not None and a.loop == var.name]
    plain = {a.var for a in accs if a.op in ATOMIC}
    if not accs or carried - plain:
        raise Decline(f"line {loop.lineno}: the loop after it carries {', '.join(sorted(carried - plain))} "
                      "(not a sum, max or min)")
    accs = [a for a in accs if a.var in carried]
    for a in accs:
        _plain_updates(ks, loop, a)
        init = _initial(ks, loop, a)
        if init not in pre:
            raise Decline(f"line {loop.lineno}: `{a.var}` is not started right before its loop")
    reorderable_loop(ks, var, {a.var for a in accs}, "reduction")
    if any(var.name in st.in_loops for st in comp.stores):
        raise Decline(f"line {loop.lineno}: the later reduction loop stores")
    rest = ks.fn.body[ks.fn.body.index(loop) + 1:]
    left = (assigned_names([loop]) - {a.var for a in accs}) & set(free_names(rest))
    if left:
        raise Decline(f"line {loop.lineno}: {', '.join(sorted(left))} is set in a later reduction loop and read "
                      "after it")
    return accs


def _lines(node: ast.AST) -> set[int]:
    return {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}


def _launch_per_pass(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind, loop: ast.For,
                     rest: list[ast.stmt], partials: list[Partial], layouts: dict, names: dict[str, str],
                     passes: list[_Pass], tail: list[ast.stmt], loop_edits: list, fill: int, target,  # noqa: ANN001
                     why_not_direct: str, selected: set[str]) -> list:
    """Kernel fission at each combine: the kernel runs once per reduction pass and once more for the tail, over
    the same (outputs, slices) grid, the pass chosen by a new constexpr. Launch k reduces pass k's slices into its
    workspace (the earlier passes' totals read back); the last launch reads every total and runs the tail with its
    loops split over the slices too, so a normalising pass is as parallel as the reductions. One slice: one
    launch runs the kernel whole (PHASE 0)."""
    statements = [ks.enclosing_statement(call) for call, _ in launch_grids(ks)]
    if not all(isinstance(st, ast.Expr) for st in statements):
        raise Decline("a launch is not a statement of its own (it cannot be repeated for each pass)")
    indent, phase = ks.text.indent(loop), ks.fresh("PHASE")
    axis = split_axis(comp)
    program = output_program(ks, axis)
    stages = [partials]
    slot_names = {p.slot: names[p.var] for p in partials}  # one slot variable per distinct slot expression
    for ps in passes:
        later, more = _workspace_partials(ks, ps.loop, ps.accs, program, {q.workspace for st in stages for q in st})
        stages.append(later)
        layouts.update(more)
        names.update({p.var: slot_names.setdefault(p.slot, ks.fresh(f"{p.var}_slot")) for p in later})
    last = len(stages) + 1  # the tail's launch

    def nest(text: str, depth: int) -> str:
        try:
            return reindent(text, indent, indent + "    " * depth)
        except ValueError:
            raise Decline("the statements after the split loop are not indented uniformly") from None

    # every loop gets its slice of the iterations; each region keeps the comment lines above it
    loops = [loop, *(ps.loop for ps in passes)]
    tail_loops = [s for s in tail if isinstance(s, ast.For)]
    slice_edits = list(loop_edits)
    for lp in loops[1:]:
        slice_edits += _sliced(ks, lp, simple_range(lp), f"this pass is split over grid axis {axis} too", axis)
    for lp in tail_loops:
        slice_edits += _sliced(ks, lp, simple_range(lp), "what follows the totals runs in slices too: this program "
                               "takes one slice of this loop", axis)
    edits = []
    start = ks.text.statement_lines(loop)[0]
    for k, lp in enumerate(loops, start=1):
        pre = passes[k - 2].pre if k > 1 else []
        if pre:
            end = ks.text.statement_lines(pre[-1])[1]
            edits.append(Edit(start, end, nest(span_text(ks, start, end, slice_edits, insert_at_end=False), k - 1)))
            start = end
        end = ks.text.statement_lines(lp)[1]
        pad = indent + "    " * (k - 1)
        head = (f"{indent}# one kernel, one launch per reduction pass and one to finish when the loop is split "
                f"({phase} k), or one launch that runs it whole ({phase} 0)\n") if k == 1 else ""
        edits.append(Edit(start, end, head + f"{pad}if {phase} == 0 or {phase} == {k}:\n"
                          + nest(span_text(ks, start, end, slice_edits, insert_at_end=False), k)
                          + combine_per_launch(ks, pad, stages[k - 1], phase, k, names)
                          + f"{pad}if {phase} == 0 or {phase} > {k}:\n"))
        start = end
    end = ks.text.statement_lines(rest[-1])[1]
    if tail:
        edits.append(Edit(start, end, nest(span_text(ks, start, end, slice_edits, insert_at_end=False), len(loops))))
    else:
        edits.append(Edit(start, end, f"{indent}{'    ' * len(loops)}pass\n"))
    everything = [p for stage in stages for p in stage]
    edits += [append_constexprs(ks, [p.workspace for p in everything], constexpr=False),
              append_constexprs(ks, [phase]),
              *_repeated_launches(ks, comp, everything, layouts, phase, last, fill)]
    walked = "a strided axis" if kind.name == COLUMN_REDUCTION else "its contiguous axis"
    carried = "; ".join(", ".join(f"`{p.var}` ({p.op})" for p in stage) for stage in stages)
    where = ", ".join(str(lp.lineno) for lp in [*loops, *tail_loops])
    rationale = (
        f"The kernel reduces over {walked} (the model classifies it as a {kind.name}) with one program per output "
        f"block, each walking the whole loops on lines {where} in turn: few outputs leave the device idle in all "
        f"of them. The kernel now runs {last} times over a grid of outputs x slices, the slices chosen at launch so "
        f"the grid reaches about {fill} programs (**guess:** {_units(target, fill)} of the device table, unless "
        f"profiled). Launch k splits reduction loop k and adds each slice's partials ({carried}) into a workspace "
        f"(they cannot go straight into the output: {why_not_direct}), the earlier passes' totals read back first. "
        f"The last launch reads every total and runs the rest of the kernel as written in every slice"
        + (", each taking its share of the loop(s) after the reductions (their iterations are independent)"
           if tail_loops else "") +
        ". One slice (a grid that already fills the device) runs the kernel whole in one launch."
    )
    rationale += _online_note(everything, selected)
    return [finish(recipe, ks.ctx, [e for e in edits if isinstance(e, Edit)],
                   f"Split every pass over the reduced axis over a {_ORDINAL[axis]} grid axis ({last} launches, "
                   f"{len(everything)} partial(s) combined)", rationale, config={"max_split": MAX_SPLIT})]


def _workspace_partials(ks: KernelSource, loop: ast.For, accs: list[Accumulation], program: str,
                        taken: set[str]) -> tuple[list[Partial], dict]:
    """One workspace per accumulator, sized from the statement that starts it (names distinct from `taken`), and
    the accumulators' layouts."""
    layouts = _layouts(ks, {a.var: _initial(ks, loop, a) for a in accs}, accs)
    out = []
    for a in accs:
        name = ks.fresh(f"{a.var}_partials")
        i = 2
        while name in taken:
            name, i = f"{ks.fresh(f'{a.var}_partials')}_{i}", i + 1
        taken.add(name)
        out.append(Partial(a.var, a.op, name, program_slot(ks.tl, program, [ks.segment(d) for d in
                                                                            layouts[a.var].dims]),
                           dtype=layouts[a.var].dtype))
    return out, layouts


def _layouts(ks: KernelSource, inits: dict[str, ast.Assign], accs: list[Accumulation]) -> dict:
    layouts = {a.var: accumulator_layout(ks, inits[a.var].value) for a in accs}
    for a in accs:
        if a.op in ("max", "min") and layouts[a.var].dtype != "float32":
            raise Decline(f"`{a.var}` is an integer {a.op}: its workspace would start from no integer infinity")
    constexprs = constexpr_params(ks)
    for lay in layouts.values():
        for d in lay.dims:
            if not ((isinstance(d, ast.Constant) and type(d.value) is int) or
                    (isinstance(d, ast.Name) and d.id in constexprs)):
                raise Decline(f"line {d.lineno}: an accumulator dimension `{ks.segment(d)}` is not a constexpr "
                              "parameter or a literal")
    return layouts


def _repeated_launches(ks: KernelSource, comp: Computation, partials: list[Partial], layouts: dict, phase: str,
                       last: int, fill: int) -> list[Edit]:
    """Each launch becomes its workspaces and one launch per phase (1..last) when split, else one (PHASE 0)."""
    edits = []
    splits, sites = _workspace_launches(ks, comp, partials, layouts, None, fill, f"{phase}={_PHASE_MARK}")
    for statement, lines, inside in sites:
        ind = ks.text.indent(statement)
        try:
            launch = reindent(region_text(ks, statement, statement, inside), ind, ind + "    ")
        except ValueError:
            raise Decline(f"line {statement.lineno}: the launch's lines are not indented uniformly") from None
        # each launch passes its phase as a literal, so the launch values stay readable facts for levels 2-4
        lines += (f"{ind}if {splits} > 1:  # one launch per pass over the slices, then one that finishes\n"
                  + "".join(launch.replace(_PHASE_MARK, str(k)) for k in range(1, last + 1))
                  + f"{ind}else:  # the grid fills the device: one launch runs the kernel whole\n"
                  + launch.replace(_PHASE_MARK, "0"))
        edits.append(ks.text.replace_statements(statement, lines))
    return edits


def _workspace_launches(ks: KernelSource, comp: Computation, partials: list[Partial], layouts: dict,
                        arrivals: str | None, fill: int, more: str) -> tuple[str, list[tuple[ast.stmt, str, list[Edit]]]]:
    """The wrapper's name for the number of slices, and per launch: its statement, the wrapper lines before it
    (hoisted block literals, the number of slices, the workspaces and arrival counters) and the edits inside it
    (the 2-D grid, the hoisted values, the workspaces and `more` passed by keyword)."""
    torch = imported_as(ks, "torch")
    splits = ks.fresh("row_splits")
    dims_used = {d.id for lay in layouts.values() for d in lay.dims if isinstance(d, ast.Name)}
    device_param = comp.loads[0].tensor if comp.loads else comp.stores[0].tensor
    out = []
    for call, grid in launch_grids(ks):
        statement = ks.enclosing_statement(call)
        ind = ks.text.indent(statement)
        hoisted, wrapper_dims = _wrapper_values(ks, call, dims_used)
        axes = _grid_axes(ks, call, grid, hoisted, split_axis(comp))
        grid0 = _count(axes)
        sizes = {p.var: " * ".join([grid0, *(_dim_text(ks, d, wrapper_dims) for d in layouts[p.var].dims)])
                 for p in partials}
        device = f"{paren(ks.segment(launch_argument(ks, call, device_param)))}.device"
        lines = "".join(f"{ind}{local} = {value}  # one value for the launch and the workspace size\n"
                        for _, (local, value) in hoisted.items())
        lines += f"{ind}{splits} = max(1, min({MAX_SPLIT}, {fill} // max(1, {grid0})))\n"
        lines += workspace_lines(torch, ind, partials, sizes, arrivals, grid0, splits, device)
        inside = [ks.text.replace(call.func.slice, f"({', '.join(axes)}, {splits})"),
                  *(ks.text.replace(launch_argument(ks, call, param), local) for param, (local, _) in hoisted.items()),
                  append_argument(ks, call, ", ".join(f"{p.workspace}={p.workspace}" for p in partials)
                                  + f", {more}")]
        out.append((statement, lines, inside))
    return splits, out


def _wrapper_values(ks: KernelSource, call: ast.Call, params: set[str]) -> tuple[dict[str, tuple[str, str]],
                                                                              dict[str, str]]:
    """What each constexpr sizing an accumulator is at this launch, as wrapper text; an integer literal passed
    there is hoisted into a local (`block_n = 64`) that the launch and the workspace size then share, so that
    moving the block (config search edits the one literal) moves both."""
    hoisted: dict[str, tuple[str, str]] = {}
    values: dict[str, str] = {}
    for param in sorted(params):
        node = launch_argument(ks, call, param)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            local = ks.fresh(param.lower())
            hoisted[param] = (local, str(node.value))
            values[param] = local
        else:
            values[param] = paren(ks.segment(node))
    return hoisted, values


def _dim_text(ks: KernelSource, dim: ast.expr, wrapper: dict[str, str]) -> str:
    return wrapper[dim.id] if isinstance(dim, ast.Name) else ks.segment(dim)


def _grid_axes(ks: KernelSource, call: ast.Call, grid: ast.AST, hoisted: dict[str, tuple[str, str]],
               axis: int) -> list[str]:
    """The launch's grid axes over the outputs; a block literal they divide by (`triton.cdiv(n, 64)`) that was
    hoisted into a local is read from that local."""
    texts = grid_axes(ks, call, axis)
    if not hoisted:
        return texts
    values = {value: local for local, value in hoisted.values()}
    if len(values) != len(hoisted):
        raise Decline(f"line {call.lineno}: two blocks are passed the same literal (which one sizes the grid?)")
    if not isinstance(call.func.slice, ast.Tuple):
        if _cdiv_literals(grid, values):
            raise Decline(f"line {call.lineno}: the named grid divides by a block literal the workspace needs")
        return texts
    out = []
    for element in call.func.slice.elts[:axis]:
        edits = [ks.text.replace(n, values[str(n.value)]) for n in _cdiv_literals(element, values)]
        out.append(node_text(ks, element, edits))
    return out


def _cdiv_literals(node: ast.AST, values: dict[str, str]) -> list[ast.Constant]:
    return [c.args[1] for c in ast.walk(node) if isinstance(c, ast.Call) and len(c.args) == 2
            and getattr(c.func, "attr", getattr(c.func, "id", "")) == "cdiv"
            and isinstance(c.args[1], ast.Constant) and str(c.args[1].value) in values]


def _units(target, fill: int) -> str:  # noqa: ANN001
    return f"the Ascend target's {fill} AI cores" if target.ascend else f"{SMS_GUESS} SMs of the sm_9x entry"


RECIPE = ScheduleRecipe(
    name="schedule-reduction-split",
    title="Reduction loop split over a second grid axis",
    build=_build,
    evidence=("TL140", "TL203"),  # decode attention without a split over the keys; a grid that underfills
)
