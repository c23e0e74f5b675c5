"""Give each program a tile of ROWS rows instead of one: 1D blocks become 2D tiles.

A kernel launched with one program per row (`row = tl.program_id(0)`) moves one row's vector per program: stores
that walk a column (a transpose) touch one element per row, per-row scalar work (an id, a pointer) is repeated per
program, and a small row leaves most lanes idle. Here the program id becomes a column of ROWS row indices
(`rows[:, None]`), every `tl.arange(0, B)` becomes a row vector (`[None, :]`), so each load/store covers a
(ROWS, B) tile (Triton then coalesces both the row-major reads and the column-major writes), every memory access
is masked by `row < n_rows_total`, loop-carried literal accumulators become (ROWS, 1) columns, and each launch
in the file gets `cdiv(grid, ROWS)` programs and passes the old grid size. It declines on reductions, scans,
tl.dot, atomics, block constructors, branches, loops whose bounds depend on the row, multi-axis grids and
launches outside the file.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    REDUCTIONS,
    assigned_names,
    count_name,
    literal_init,
    loaded_names,
    previous_assignment,
    walk_statements,
)
from ..recipe_edits import and_mask, append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

ROWS_CHOICES = (16, 64)
_BLOCKING = (*REDUCTIONS, "dot", "cumsum", "associative_scan", "zeros", "full", "zeros_like", "full_like",
             "reshape", "view", "trans", "permute", "broadcast_to", "expand_dims", "split", "join", "make_block_ptr",
             "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "num_programs")


def _tainted(ks: KernelSource, seed: str) -> set[str]:
    names = {seed}
    for _ in range(3):
        for stmt, _body in walk_statements(ks.fn.body):
            if isinstance(stmt, ast.Assign | ast.AugAssign) and loaded_names(stmt.value) & names:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names |= {n for t in targets for n in loaded_names(t)}
    return names


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    fn = ks.fn
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    if any(ks.is_tl(n, *_BLOCKING) for n in calls):
        raise Decline("the kernel reduces, scans, uses tl.dot/atomics or builds blocks: rows are not independent")
    if any(isinstance(n, ast.If | ast.While | ast.IfExp | ast.Return) for n in ast.walk(fn)):
        raise Decline("the kernel branches or returns early")
    pids = [n for n in calls if ks.is_tl(n, "program_id")]
    if len(pids) != 1 or not (pids[0].args and isinstance(pids[0].args[0], ast.Constant) and pids[0].args[0].value == 0):
        raise Decline("the kernel does not read exactly one tl.program_id(0)")
    pid = pids[0]
    row_stmt = ks.enclosing_statement(pid)
    if not (
        any(row_stmt is s for s in fn.body)
        and isinstance(row_stmt, ast.Assign)
        and len(row_stmt.targets) == 1
        and isinstance(row_stmt.targets[0], ast.Name)
    ):
        raise Decline("the program id is not assigned to a name at the top of the kernel")
    row = row_stmt.targets[0].id
    tainted = _tainted(ks, row)
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For) and loaded_names(loop.iter) & tainted:
            raise Decline(f"line {loop.lineno}: the loop bounds depend on the row")
    aranges = [n for n in calls if ks.is_tl(n, "arange")]
    for node in aranges:
        if isinstance(ks.parent(node), ast.Subscript):
            raise Decline(f"line {node.lineno}: the kernel already works on 2D tiles")
    args = fn.args
    launches = launch_grids(ks)
    triton = imported_as(ks, "triton")
    grids = []
    for call, grid in launches:
        if isinstance(grid, ast.Tuple) and len(grid.elts) == 1:
            grids.append((call, ks.segment(grid.elts[0])))
        elif isinstance(grid, ast.Lambda) or isinstance(grid, ast.Tuple):
            raise Decline(f"the grid at line {call.lineno} is not a single-axis tuple")
        else:
            grids.append((call, f"{ks.segment(call.func.slice)}[0]"))
    # loop-carried accumulators with a literal start become one value per row
    carried: dict[int, ast.Assign] = {}
    for stmt, body in walk_statements(fn.body):
        if isinstance(stmt, ast.For):
            for name in assigned_names(stmt.body):
                init = previous_assignment(body, stmt, name)
                if isinstance(init, ast.Assign) and literal_init(init.value) is not None:
                    carried[id(init)] = init

    total, rows_name, ok = ks.fresh("n_rows_total"), ks.fresh(f"{row}_ids"), ks.fresh(f"{row}_ok")
    candidates = []
    for rows in ROWS_CHOICES:
        tl = ks.tl
        indent = ks.text.indent(row_stmt)
        edits = [
            ks.text.insert_before(
                row_stmt,
                f"{indent}{rows_name} = {tl('program_id')}(0) * {rows} + {tl('arange')}(0, {rows})\n"
                f"{indent}{ok} = {rows_name}[:, None] < {total}\n",
            ),
            ks.text.replace(pid, f"{rows_name}[:, None]"),
        ]
        edits += [ks.text.replace(n, f"{ks.segment(n)}[None, :]") for n in aranges]
        for node in calls:
            if ks.is_tl(node, "load", "store"):
                edits.append(and_mask(ks, node, ok))
        for init in carried.values():
            exact = isinstance(init.value, ast.Constant) and type(init.value.value) is int
            dtype = tl("int32") if exact else tl("float32")
            new = f"{tl('full')}([{rows}, 1], {ks.segment(init.value)}, dtype={dtype})"
            edits.append(ks.text.replace(init.value, new))
        for call, count in grids:
            edits.append(ks.text.replace(call.func.slice, f"({triton}.cdiv({count}, {rows}),)"))
            edits.append(append_argument(ks, call, f"{total}={count}"))
        last = args.args[-1]
        edits.append(Edit(ks.text.end(last), ks.text.end(last), f", {total}"))
        if count_name([fn], row) < 2:
            raise Decline(f"{row} is never used")
        rationale = (
            f"One program handled one `{row}`. Each program now handles {rows} consecutive rows as 2D tiles "
            f"(rows x the block), with every access masked by `{ok}`; the launch starts cdiv(old grid, {rows}) "
            "programs. Column-walking stores become tile stores Triton can coalesce, and per-row overheads are "
            "shared by the tile."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Tiles of {rows} rows per program (2D tiles)", rationale,
                                 config={"ROWS": rows}))
    return candidates


RECIPE = SourceRecipe(
    name="row-tiles-2d",
    title="2D tiles: several rows per program",
    keys=("TL131", "TL104", "TL105", "TL109", "TL207", "TL126"),
    build=_build,
)
