"""Column reduction with one program per column -> programs own BLOCK_C contiguous columns, loads coalesced.

    col = tl.program_id(0)                          # one column per program
    acc = 0.0
    for r in range(M):                              # (or lanes down the column: r = s + tl.arange(0, BLOCK_M))
        acc += tl.load(x_ptr + r * stride + col)    # a strided load: one element per row
    tl.store(out_ptr + col, acc / M)

Each load of such a kernel reads 4 bytes from a different row; neighbouring programs read the neighbouring
bytes at other times, so every sector is fetched again and again. Here the program id becomes a row vector of
BLOCK_C consecutive columns (`cols[None, :]`) and each `tl.arange` down the column a column vector
(`[:, None]`): a load covers (rows, BLOCK_C) with the contiguous axis innermost, every access the program id moves
is masked by the column count (the old grid size, passed as a new parameter), carried scalars start as (1,
BLOCK_C) rows, 1-D accumulators gain the column axis, and reductions over the rows keep that axis
(`axis=0, keep_dims=True`) so the per-column results store at the (1, BLOCK_C) column addresses. BLOCK_C is chosen
at the launch from a tile budget over the block down the column (a literal config search moves).

Where the column blocks are too few to fill the device (a wide reduction over few columns), reduction_split.py
splits the row loop over a second grid axis on the next round: this schedule's output is a column reduction with
coalesced rows, the form reduction_split takes. Chosen from the model: a column reduction (classify) whose main
input has the program id as its stride-1 axis. Declines when a block of lanes is already the contiguous axis
(already coalesced), for second grid axes, branches, tl.dot, block pointers and atomics.
"""

from __future__ import annotations

import ast

from ...computation.classify import COLUMN_REDUCTION, Kind, _main_input
from ...computation.model import PROGRAM, Computation
from ..kernel_patterns import REDUCTIONS, assigned_names, literal_init, previous_assignment, walk_statements
from ..recipe_edits import and_mask, append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from ..source_edit import Edit
from .emit import (
    ScheduleRecipe,
    append_constexprs,
    launch_argument,
    node_text,
    one_axis_grid,
    require_affine,
    require_class,
)

TILE_BUDGETS = (2048, 8192)  # elements of one program's tile: BLOCK_C = budget // the block down the column
MIN_COLS, MAX_COLS = 16, 256  # 16 fp32 columns: at least one 64-byte row segment per load
_BLOCKING = ("dot", "make_block_ptr", "make_tensor_descriptor", "reshape", "view", "trans", "permute",
             "broadcast_to", "expand_dims", "split", "join", "num_programs", "cumsum", "cumprod",
             "associative_scan", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg")


def _shape_arg(call: ast.Call) -> ast.expr | None:
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)


def _reduce_text(ks: KernelSource, call: ast.Call, edits: list[Edit]) -> str:
    axis = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value in (0, -1, None)):
        raise Decline(f"line {call.lineno}: a reduction over axis {ks.segment(axis)} of a 1-D block")
    if any(k.arg == "keep_dims" for k in call.keywords) or len(call.args) > 2:
        raise Decline(f"line {call.lineno}: the reduction already sets keep_dims or passes positional options")
    rest = "".join(f", {ks.segment(k)}" for k in call.keywords if k.arg != "axis")
    return f"{ks.segment(call.func)}({node_text(ks, call.args[0], edits)}, axis=0, keep_dims=True{rest})"


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, COLUMN_REDUCTION)
    if any(v.kind == PROGRAM and v.name[3:].isdigit() and v.name != "pid0" for v in comp.index_vars):
        raise Decline("the kernel uses a second grid axis")
    require_affine(comp.accesses)
    main = _main_input(comp)
    if main is None or main.contiguous() != "pid0":
        lane = main.contiguous() if main is not None else None
        raise Decline(f"the columns are already read coalesced (the contiguous axis of "
                      f"{main.tensor if main else 'the input'} is {lane or 'unknown'}, not the program id)")
    calls = [n for n in ast.walk(ks.fn) if isinstance(n, ast.Call)]
    blocking = next((n for n in calls if ks.is_tl(n, *_BLOCKING)), None)
    if blocking is not None:
        raise Decline(f"line {blocking.lineno}: tl.{ks.tl_call(blocking)} has a shape the column tile would change")
    if any(isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Return)) for n in ast.walk(ks.fn)):
        raise Decline("the kernel branches or returns early")
    pids = [n for n in calls if ks.is_tl(n, "program_id")]
    if not all(n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == 0 for n in pids):
        raise Decline("the kernel does not read the column as tl.program_id(0)")
    for a in comp.accesses:
        if len(a.dims) > 1:
            raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} is already a 2-D tile")
        if a.strided_by("pid0").is_zero and a.kind != "load":
            raise Decline(f"line {a.line}: every program stores to the same {a.tensor} addresses")
    moved = {a.line for a in comp.accesses if not a.strided_by("pid0").is_zero}
    lanes = {v.extent for v in comp.index_vars if v.kind == "lane"}
    if len(lanes) > 1:
        raise Decline(f"the column is covered by blocks of different sizes ({', '.join(sorted(lanes))})")
    lane_block = next(iter(lanes), None)

    tl, triton = ks.tl, imported_as(ks, "triton")
    cols, ok, total, block_c = ks.fresh("col_ids"), ks.fresh("col_ok"), ks.fresh("n_cols_total"), ks.fresh("BLOCK_C")
    first = ks.fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):  # keep the docstring first
        first = ks.fn.body[1]
    ind = ks.text.indent(first)
    aranges = [n for n in calls if ks.is_tl(n, "arange")]
    if any(isinstance(ks.parent(n), ast.Subscript) for n in aranges):
        raise Decline("the kernel already indexes its blocks as 2-D tiles")
    edits: list[Edit] = [
        ks.text.insert_before(first, f"{ind}{cols} = {tl('program_id')}(0) * {block_c} + {tl('arange')}(0, {block_c})"
                                     f"  # {block_c} contiguous columns per program\n"
                                     f"{ind}{ok} = {cols}[None, :] < {total}\n"),
        *[ks.text.replace(n, f"{cols}[None, :]") for n in pids],
        *[ks.text.replace(n, f"{ks.segment(n)}[:, None]") for n in aranges],
        *[and_mask(ks, n, ok) for n in calls if ks.is_tl(n, "load", "store") and n.lineno in moved],
    ]
    # accumulators gain the column axis: literal scalars start as a (1, BLOCK_C) row, 1-D blocks as (B, BLOCK_C)
    for n in calls:
        if ks.is_tl(n, "zeros", "full", "zeros_like", "full_like"):
            shape = _shape_arg(n)
            if ks.is_tl(n, "zeros_like", "full_like") or not (isinstance(shape, (ast.Tuple, ast.List))
                                                              and len(shape.elts) == 1):
                raise Decline(f"line {n.lineno}: a block whose shape is not a 1-D literal")
            edits.append(ks.text.replace(shape, f"({ks.segment(shape.elts[0])}, {block_c})"))
    for stmt, body in walk_statements(ks.fn.body):
        if isinstance(stmt, ast.For):
            for name in assigned_names(stmt.body):
                init = previous_assignment(body, stmt, name)
                if isinstance(init, ast.Assign) and literal_init(init.value) is not None:
                    exact = isinstance(init.value, ast.Constant) and type(init.value.value) is int
                    dtype = tl("int32") if exact else tl("float32")
                    edits.append(ks.text.replace(init.value, f"{tl('full')}((1, {block_c}), "
                                                             f"{ks.segment(init.value)}, dtype={dtype})"))
    reductions = [n for n in calls if ks.is_tl(n, *REDUCTIONS)]
    for n in reductions:
        if any(r is not n and ks.text.start(n) <= ks.text.start(r) < ks.text.end(n) for r in reductions):
            raise Decline(f"line {n.lineno}: nested reductions")
    for n in reductions:
        edits.append(ks.text.replace(n, _reduce_text(ks, n, edits)))
    args = ks.fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    edits.append(Edit(ks.text.end(args.args[-1]), ks.text.end(args.args[-1]), f", {total}"))
    edits.append(append_constexprs(ks, [block_c]))
    params = [a.arg for a in args.args]
    candidates = []
    for budget in TILE_BUDGETS:
        launch_edits = []
        for call, _ in launch_grids(ks):
            statement = ks.enclosing_statement(call)
            grid0 = one_axis_grid(ks, call)
            name = ks.fresh("cols_per_program")
            down = "1"
            if lane_block is not None:
                down = ks.segment(launch_argument(ks, call, lane_block)) if lane_block in params else lane_block
            launch_edits += [
                ks.text.insert_before(statement, f"{ks.text.indent(statement)}{name} = max({MIN_COLS}, min({MAX_COLS}, "
                                                 f"{budget} // {triton}.next_power_of_2({down})))\n"),
                ks.text.replace(call.func.slice, f"({triton}.cdiv({grid0}, {name}),)"),
                append_argument(ks, call, f"{total}={grid0}, {block_c}={name}"),
            ]
        rationale = (
            f"Each program reduced one column of `{main.tensor}` with strided loads (the model classifies the kernel "
            "as a column reduction whose stride-1 axis is the program id). Programs now own blocks of up to "
            f"{MAX_COLS} contiguous columns (tiles of about {budget} elements): every load reads whole row segments, "
            "coalesced, and the reduction runs down axis 0 of the tile. Few column blocks are then split over a "
            "second grid axis by the column-split schedule."
        )
        candidates.append(finish(recipe, ks.ctx, edits + launch_edits, f"Coalesced column tiles (~{budget} "
                                 "elements per program)", rationale, config={"column_tile_budget": budget}))
    return candidates


RECIPE = ScheduleRecipe(
    name="schedule-column-tiles",
    title="Column reduction over coalesced (rows, BLOCK_C) tiles",
    build=_build,
)
