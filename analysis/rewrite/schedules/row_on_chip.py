"""Multi-pass row kernel -> one pass with the whole row on chip, where the row fits; the passes' loads shared.

    for start in range(0, n_cols, BLOCK):     # pass 1: mean       (the same for a max, a sum of squares ...)
        ...
    for start in range(0, n_cols, BLOCK):     # pass 2: variance
        ...
    for start in range(0, n_cols, BLOCK):     # pass 3: normalise and store

Every loop walks the same row by the same constexpr block. With BLOCK = next_power_of_2(n_cols) each loop runs
once, so the loops become straight-line code (`start = 0`, the body kept as the user wrote it), and a load that
the passes repeat (same tensor, same offsets, same mask) is read once into a tile and reused: the row crosses
memory once instead of once per pass. The launch passes `BLOCK=triton.next_power_of_2(n_cols)` while the row's
live tiles fit on chip (a bound from the target: registers on CUDA, the unified buffer on Ascend); longer rows
launch the original kernel, kept under a new name. Chosen from the model: a row reduction (classify) whose loops
all walk the row contiguously by the block. Declines for nested loops, loops of different bounds or steps,
accesses that do not walk the row, and launches that do not pass the block and the row length.
"""

from __future__ import annotations

import ast
import copy

from ...computation.classify import ROW_REDUCTION, Kind
from ...computation.model import LOOP, Access, Computation
from ..kernel_patterns import simple_range
from ..recipe_edits import append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from ..source_edit import Edit, reindent
from .emit import (
    ScheduleRecipe,
    constexpr_params,
    dedent_body,
    kernel_text,
    launch_argument,
    loop_node,
    names_in,
    region_text,
    require_affine,
    require_class,
)
from .targets import choices


def _canonical(ks: KernelSource, node: ast.expr, local: dict[str, ast.expr], loop_var: str) -> str:
    """The expression with names assigned earlier in the same pass expanded and the loop variable made generic:
    two passes' loads are the same read when their canonical texts are equal."""

    class Expand(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            if n.id == loop_var:
                return ast.Name("__pass_start__", ast.Load())
            if n.id in local:
                return self.visit(copy.deepcopy(local[n.id]))
            return n

    return ast.unparse(Expand().visit(copy.deepcopy(node)))


def _load_key(ks: KernelSource, call: ast.Call, stmt_index: int, loop: ast.For) -> tuple[str, ...]:
    local: dict[str, ast.expr] = {}
    for s in loop.body[:stmt_index]:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            local[s.targets[0].id] = s.value
    parts = [call.args[0] if call.args else None,
             call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mask"), None),
             call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "other"), None)]
    extra = sorted(ast.unparse(k) for k in call.keywords if k.arg not in ("mask", "other", "pointer"))
    return tuple(_canonical(ks, p, local, loop.target.id) if p is not None else "-" for p in parts) + tuple(extra)


def _walks_row(comp: Computation, a: Access, loop: str) -> bool:
    var = comp.var(loop)
    lane = a.contiguous()
    return lane is not None and lane.startswith("lane") and a.strided_by(loop) == var.step


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, ROW_REDUCTION)
    loops = [loop_node(ks, v) for v in comp.index_vars if v.kind == LOOP]
    if not loops:
        raise Decline("the row is reduced without a loop (already one pass)")
    if not all(any(loop is s for s in ks.fn.body) for loop in loops):
        raise Decline("a loop is nested: the passes are not straight loops over the row")
    ranges = [simple_range(loop) for loop in loops]
    if any(r is None or r[2] is None for r in ranges):
        raise Decline("a pass is not a range() over the row by a block")
    texts = {(ks.segment(r[0]), ks.segment(r[1]), ks.segment(r[2])) for r in ranges}
    if len(texts) != 1:
        raise Decline(f"the passes walk different ranges ({'; '.join(', '.join(t) for t in sorted(texts))})")
    (_, stop_text, block), = texts
    if block not in constexpr_params(ks):
        raise Decline(f"the step {block} is not a constexpr parameter")
    stop = ranges[0][1]
    if not (isinstance(stop, ast.Name) and stop.id in [a.arg for a in ks.fn.args.args]):
        raise Decline(f"the row length {stop_text} is not a kernel parameter")
    for v in comp.index_vars:
        if v.kind == LOOP:
            inside = [a for a in comp.accesses if v.name in a.in_loops]
            require_affine(inside)
            for a in inside:
                if not _walks_row(comp, a, v.name):
                    raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} does not walk the row by the block")
    written = {a.tensor for a in comp.stores}

    # loads the passes repeat: read once into a tile
    groups: dict[tuple[str, ...], list[tuple[ast.Call, ast.stmt]]] = {}
    for loop in loops:
        for i, s in enumerate(loop.body):
            for n in ast.walk(s):
                if isinstance(n, ast.Call) and ks.is_tl(n, "load"):
                    groups.setdefault(_load_key(ks, n, i, loop), []).append((n, s))
    between = [s for s in ks.fn.body[ks.fn.body.index(loops[0]):ks.fn.body.index(loops[-1])]
               if not isinstance(s, ast.For)]
    rebound = {n for s in between for t in getattr(s, "targets", [getattr(s, "target", None)]) if t is not None
               for n in names_in(t)}
    edits: list[Edit] = []
    shared = 0
    for key, loads in groups.items():
        if len(loads) < 2 or names_in(ast.parse(key[0], mode="eval")) & rebound:
            continue
        first, stmt = loads[0]
        tensor = next((a.tensor for a in comp.loads if a.line == first.lineno), "")
        if tensor in written:
            continue
        name = ks.fresh(f"{tensor.removesuffix('_ptr') or 'row'}_tile")
        edits.append(ks.text.insert_before(stmt, f"{ks.text.indent(stmt)}{name} = {ks.segment(first)}\n"))
        edits += [ks.text.replace(call, name) for call, _ in loads]
        shared += 1
    kernel_edits = []
    for loop in loops:
        mine = [e for e in edits if ks.text.line_start(loop.body[0].lineno) <= e.start < ks.text.line_end(loop.end_lineno)]
        body = dedent_body(ks, loop, region_text(ks, loop.body[0], loop.body[-1], mine))
        start, end = ks.text.statement_lines(loop)
        head = f"{ks.text.indent(loop)}{loop.target.id} = {ks.segment(ranges[0][0])}  # one pass: the block holds the row\n"
        kernel_edits.append(Edit(start, end, head + body))
    fallback = ks.fresh(f"{ks.ctx.kernel}_multipass")
    original = kernel_text(ks).replace(f"def {ks.ctx.kernel}(", f"def {fallback}(", 1)
    at = ks.text.line_end(ks.fn.end_lineno)
    kernel_edits.append(Edit(at, at, "\n\n# rows too long to hold on chip keep the multi-pass kernel\n" + original))

    triton = imported_as(ks, "triton")
    target = choices(ks.ctx.target)
    live = max(1, len({a.tensor for a in comp.loads}))
    limit = target.row_elements_on_chip(live)
    launch_edits = []
    for call, _ in launch_grids(ks):
        statement = ks.enclosing_statement(call)
        if not (isinstance(statement, ast.Expr) and statement.value is call):
            raise Decline(f"line {call.lineno}: the launch is not a statement of its own")
        n_arg = ks.segment(launch_argument(ks, call, stop.id))
        block_arg = launch_argument(ks, call, block)
        fused = [ks.text.replace(block_arg, f"{triton}.next_power_of_2({n_arg})")]
        if target.num_warps and not any(k.arg == "num_warps" for k in call.keywords):
            fused.append(append_argument(ks, call, f"num_warps={target.num_warps}"))
        one = region_text(ks, statement, statement, fused)
        multi = region_text(ks, statement, statement, [ks.text.replace(call.func.value, fallback)])
        ind = ks.text.indent(statement)
        launch_edits.append(ks.text.replace_statements(statement, (
            f"{ind}if {n_arg} <= {limit}:  # the row's tiles fit on chip: one pass\n"
            f"{reindent(one, ind, ind + '    ')}"
            f"{ind}else:\n"
            f"{reindent(multi, ind, ind + '    ')}")))
    passes = len(loops)
    rationale = (
        f"The kernel walks each row in {passes} pass(es) of `{block}` elements (the model classifies it as a row "
        f"reduction whose loops all walk the row contiguously). With `{block}` = next_power_of_2({n_arg}) every "
        f"pass runs once, so the loops become straight-line code and {shared} load(s) the passes repeat are read "
        f"once into a tile and reused: the row crosses memory once. Rows up to {limit} elements take this path "
        f"(about {target.row_bytes_on_chip // 1024} KB of live tiles for {live} input tensor(s)); longer rows "
        f"launch the original kernel, kept as `{fallback}`."
    )
    title = (f"One pass over the row on chip ({passes} passes fused, {shared} shared load(s))" if passes > 1
             else "The whole row on chip in one block")
    return [finish(recipe, ks.ctx, kernel_edits + launch_edits, title, rationale, config={"row_limit": limit})]


RECIPE = ScheduleRecipe(
    name="schedule-row-on-chip",
    title="Multi-pass row kernel fused into one pass with the row on chip",
    build=_build,
)
