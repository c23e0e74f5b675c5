"""One program per short row -> (ROWS, BLOCK) tiles: several rows per program, reductions along axis 1.

    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)                   # the whole row in one block (BLOCK = next_power_of_2(n_cols))
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
    w = tl.load(w_ptr + cols, mask=cols < n_cols)          # a vector broadcast over the rows
    tl.store(out_ptr + row, tl.sum(x * w, axis=0))         # or a row-wise result: softmax, norm, bias add

A short row leaves most of a program idle and every program pays the launch and the broadcast loads again. Here
the program id becomes a column of ROWS row indices (`rows[:, None]`) and each `tl.arange` a row vector
(`[None, :]`): the row's accesses become (ROWS, BLOCK) tiles with the contiguous axis innermost, masked by the
row count, and each reduction runs along axis 1 with `keep_dims=True` so the per-row results broadcast back over
their tile and store at the (ROWS, 1) row addresses. Accesses the program id does not move (the broadcast vector,
a scalar) keep their shape: they are loaded once per program for all its rows. ROWS is chosen at the launch as a
tile budget over the row's block (`TILE // next_power_of_2(BLOCK)`, at most 64 rows), so long rows get one row
per program; the budget is a launch literal config search moves.

Chosen from the model: an elementwise kernel, a row reduction or a row gather (classify) on grid axis 0 with no
loop (a second grid axis, over blocks of the row's columns, stays as it is), every access affine and 1-D except gathered ones (an address from a loaded row index: `table[idx[row]]`),
which take the same broadcast and the row mask. Unlike recipes/row_tiles_2d.py (a local edit that declines every
reduction), this handles row reductions and leaves broadcast loads unmasked by row. Declines for loops (long rows: row_on_chip), flat
elementwise maps (elementwise_blocks), tiles already 2-D, branches, tl.dot, block pointers and atomics.
"""

from __future__ import annotations

import ast

from ...computation.classify import ELEMENTWISE, GATHER, ROW_REDUCTION, Kind
from ...computation.model import LANE, LOOP, PROGRAM, Computation
from ...computation.symbolic import Poly
from ..kernel_patterns import REDUCTIONS
from ..recipe_edits import and_mask, append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from ..source_edit import Edit
from .emit import (
    ScheduleRecipe,
    append_constexprs,
    grid_axes,
    launch_argument,
    require_affine,
    require_class,
)

TILE_BUDGETS = (2048, 8192)  # elements of one program's tile: ROWS = budget // the row's block
MAX_ROWS = 64
_BLOCKING = ("dot", "make_block_ptr", "make_tensor_descriptor", "zeros", "full", "zeros_like", "full_like",
             "reshape", "view", "trans", "permute", "broadcast_to", "expand_dims", "split", "join", "num_programs",
             "cumsum", "cumprod", "associative_scan", "atomic_add", "atomic_max", "atomic_min", "atomic_cas",
             "atomic_xchg")


def _axis_of(call: ast.Call) -> ast.expr | None:
    if len(call.args) > 1:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "axis"), None)


def _reduce_text(ks: KernelSource, call: ast.Call) -> str:
    """`tl.sum(x, axis=0)` / `tl.max(x)` -> `tl.sum(x, axis=1, keep_dims=True)`: along the row, per row."""
    axis = _axis_of(call)
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value in (0, -1, None)):
        raise Decline(f"line {call.lineno}: a reduction over axis {ks.segment(axis)} of a 1-D block")
    if any(k.arg == "keep_dims" for k in call.keywords) or len(call.args) > 2:
        raise Decline(f"line {call.lineno}: the reduction already sets keep_dims or passes positional options")
    rest = "".join(f", {ks.segment(k)}" for k in call.keywords if k.arg != "axis")
    return f"{ks.segment(call.func)}({ks.segment(call.args[0])}, axis=1, keep_dims=True{rest})"


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, ELEMENTWISE, ROW_REDUCTION, GATHER)
    if any(v.kind == LOOP for v in comp.index_vars):
        raise Decline("the kernel loops over the row (rows longer than a block: row_on_chip's case)")
    # the row: program axis 0, or what the kernel derives from it (`row // K`, `row % K`); a second axis (blocks of
    # the row's columns, say) stays as it is
    axes = {v.name for v in comp.index_vars if v.kind == PROGRAM}
    row_axes = {a for a in axes if a.startswith("pid0")}
    if not axes - row_axes <= {"pid1"}:
        raise Decline(f"the kernel uses grid axis {', '.join(sorted(a[3:] for a in axes - row_axes - {'pid1'}))} "
                      "(a second axis is kept, a third is not)")
    n_axes = 2 if "pid1" in axes else 1
    # a gathered access (its address computed from loaded values, e.g. a row index read at the program's row)
    # takes the same broadcast: its index is loaded as a (ROWS, 1) column; it is masked by the row count
    gathered = [a for a in comp.accesses if a.data_dependent]
    affine = [a for a in comp.accesses if not a.data_dependent]
    require_affine(affine)
    calls = [n for n in ast.walk(ks.fn) if isinstance(n, ast.Call)]
    blocking = next((n for n in calls if ks.is_tl(n, *_BLOCKING)), None)
    if blocking is not None:
        raise Decline(f"line {blocking.lineno}: tl.{ks.tl_call(blocking)} has a shape the 2-D tile would change")
    if any(isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Return)) for n in ast.walk(ks.fn)):
        raise Decline("the kernel branches or returns early")
    pids = [n for n in calls if ks.is_tl(n, "program_id")]
    axis_of = {id(n): n.args[0].value if n.args and isinstance(n.args[0], ast.Constant) else None for n in pids}
    if not any(a == 0 for a in axis_of.values()) or any(a not in (0, 1) for a in axis_of.values()):
        raise Decline("the kernel does not read the row as tl.program_id(0)")
    pids = [n for n in pids if axis_of[id(n)] == 0]
    lanes = [v for v in comp.index_vars if v.kind == LANE]
    if not lanes:
        raise Decline("no tl.arange block along the row (one element per program: elementwise_blocks' case)")
    extents = {v.extent for v in lanes}
    if len(extents) != 1:
        raise Decline(f"the row is covered by blocks of different sizes ({', '.join(sorted(extents))})")
    (block,) = extents
    per_row = []
    for a in affine:
        if len([v for v in a.offset.variables if v.startswith("lane")]) > 1 or len(a.dims) > 1:
            raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} is already a 2-D tile")
        step = a.strided_by("pid0")
        if step.is_zero and any(not a.strided_by(r).is_zero for r in row_axes):
            per_row.append(a)  # it moves with a value derived from the row (`row // K`)
            continue
        if step.is_zero:
            if a.kind != "load":
                raise Decline(f"line {a.line}: every program stores to the same {a.tensor} addresses")
            continue
        if step == Poly.of(block) and any(v.startswith("lane") for v in a.offset.variables):
            raise Decline(f"line {a.line}: the program id walks {a.tensor} by its block (a flat elementwise map: "
                          "elementwise_blocks' case)")
        per_row.append(a)
    if not per_row:
        raise Decline("no access moves with the program id")
    row_lines = {a.line for a in [*per_row, *gathered]}
    aranges = [n for n in calls if ks.is_tl(n, "arange")]
    if any(isinstance(ks.parent(n), ast.Subscript) for n in aranges):
        raise Decline("the kernel already indexes its blocks as 2-D tiles")

    tl, triton = ks.tl, imported_as(ks, "triton")
    rows, ok, total, rows_c = ks.fresh("row_ids"), ks.fresh("row_ok"), ks.fresh("n_rows_total"), ks.fresh("ROWS")
    first = ks.fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):  # keep the docstring first
        first = ks.fn.body[1]
    ind = ks.text.indent(first)
    edits: list[Edit] = [
        ks.text.insert_before(first, f"{ind}{rows} = {tl('program_id')}(0) * {rows_c} + {tl('arange')}(0, {rows_c})"
                                     f"  # {rows_c} rows per program\n{ind}{ok} = {rows}[:, None] < {total}\n"),
        *[ks.text.replace(n, f"{rows}[:, None]") for n in pids],
        *[ks.text.replace(n, f"{ks.segment(n)}[None, :]") for n in aranges],
    ]
    reductions = [n for n in calls if ks.is_tl(n, *REDUCTIONS)]
    for n in reductions:
        inner = [r for r in reductions if r is not n and ks.text.start(n) <= ks.text.start(r) < ks.text.end(n)]
        if inner:
            raise Decline(f"line {n.lineno}: nested reductions")
    for n in calls:
        if ks.is_tl(n, "load", "store") and n.lineno in row_lines:
            edits.append(and_mask(ks, n, ok))
    # a reduction's argument may hold an access or an arange: apply those edits inside its new text
    from .emit import node_text

    for n in reductions:
        text = _reduce_text(ks, n)
        arg_text = node_text(ks, n.args[0], edits)
        text = text.replace(f"({ks.segment(n.args[0])},", f"({arg_text},", 1)
        edits.append(ks.text.replace(n, text))
    args = ks.fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    edits.append(Edit(ks.text.end(args.args[-1]), ks.text.end(args.args[-1]), f", {total}"))
    edits.append(append_constexprs(ks, [rows_c]))
    params = [a.arg for a in args.args]
    candidates = []
    for budget in TILE_BUDGETS:
        launch_edits = []
        for call, _ in launch_grids(ks):
            statement = ks.enclosing_statement(call)
            block_text = ks.segment(launch_argument(ks, call, block)) if block in params else block
            grid0, *others = grid_axes(ks, call, n_axes)
            name = ks.fresh("rows_per_program")
            launch_edits += [
                ks.text.insert_before(statement, f"{ks.text.indent(statement)}{name} = max(1, min({MAX_ROWS}, "
                                                 f"{budget} // {triton}.next_power_of_2({block_text})))\n"),
                ks.text.replace(call.func.slice, f"({triton}.cdiv({grid0}, {name}),{' ' + ', '.join(others) if others else ''})"),
                append_argument(ks, call, f"{total}={grid0}, {rows_c}={name}"),
            ]
        rationale = (
            f"Each program handled one row of `{block}` lanes (the model classifies the kernel as a "
            f"{kind.name} with one program per row and no loop). Programs now take up to {MAX_ROWS} rows as "
            f"(rows, {block}) tiles, about {budget} elements each, with the contiguous axis innermost; reductions "
            f"run along axis 1 per row, and {len(comp.accesses) - len(per_row)} access(es) the row does not move "
            "(broadcast vectors, scalars) are loaded once per program."
        )
        candidates.append(finish(recipe, ks.ctx, edits + launch_edits, f"Several rows per program (tiles of "
                                 f"~{budget} elements)", rationale, config={"row_tile_budget": budget}))
    return candidates


RECIPE = ScheduleRecipe(
    name="schedule-row-tiles",
    title="Several short rows per program as 2-D tiles",
    build=_build,
)
