"""Elementwise kernel -> blocks sized for 128-bit accesses and enough programs to fill the device.

Two first-draft shapes of the same flat map `y[i] = f(x[i], ...)` are re-blocked:

    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)    # blocked, but BLOCK=64 or 128 at the launch
    i = tl.program_id(0)                                      # one element per program, scalar loads

Blocked drafts keep their kernel: the launch passes BLOCK = elements-per-16-bytes x 32 threads x num_warps x a
small unroll (targets.py; on Ascend, 32-byte granules and one program per AI core) with the matching num_warps,
and the grid becomes `cdiv(old_grid * old_BLOCK, new BLOCK)`: it covers every element the draft covered, so the
draft's own masks stay right. Scalar drafts get `tl.program_id(0)` turned into a block of EW_BLOCK lanes, every
access masked to the old grid's size (passed as a new parameter), and `cdiv(old_grid, EW_BLOCK)` programs.
A draft whose programs all walk every element (one loop over blocks from 0, the program id unused: a grid of
one) becomes a grid-stride loop (`range(pid * BLOCK, n, num_programs * BLOCK)`) over `programs_to_fill` programs.
Chosen from the model: an elementwise kernel (classify) on grid axis 0 only, no loop, every access affine with
the program id moving it by the lane block (blocked) or by one element with no lanes (scalar). Program-per-row
kernels (a row stride, a broadcast vector) are row_tiles.py's; a draft already at such blocks declines.
"""

from __future__ import annotations

import ast

from ...computation.classify import ELEMENTWISE, Kind
from ...computation.model import LANE, LOOP, PROGRAM, Computation
from ...computation.symbolic import Poly
from ..kernel_patterns import simple_range
from ..recipe_edits import and_mask, append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, finish
from .emit import (
    ScheduleRecipe,
    append_constexprs,
    constexpr_params,
    launch_argument,
    loop_node,
    one_axis_grid,
    require_affine,
    require_class,
)
from .targets import TargetChoices, choices

UNROLLS = (2, 4)  # vector accesses per thread per block: the candidates config search starts from
ASCEND_GRANULES = (256, 1024)  # 32-byte granules per block on Ascend (8 KB and 32 KB fp32 tiles in the UB)


def block_sizes(target: TargetChoices, element_bytes: int = 4) -> list[tuple[int, int | None]]:
    """(elements per block, num_warps) candidates: whole 128-bit accesses for every thread of every warp."""
    per = target.elements_per_access(element_bytes)
    if target.ascend:
        return [(per * g, None) for g in ASCEND_GRANULES]
    half = max(1, target.num_warps // 2)
    return [(per * 32 * half * UNROLLS[0], half), (per * 32 * target.num_warps * UNROLLS[1], target.num_warps)]


def _int_literal(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _shape(comp: Computation) -> tuple[str, str | None]:
    """("blocked", BLOCK) or ("scalar", None) from the accesses' index maps; Decline otherwise."""
    lanes = [v for v in comp.index_vars if v.kind == LANE]
    if not lanes:
        for a in comp.accesses:
            if a.offset is not None and "pid0" in a.offset.variables and a.strided_by("pid0").constant != 1:
                raise Decline(f"line {a.line}: the program id moves the {a.kind} of {a.tensor} by "
                              f"{a.strided_by('pid0')}, not one element")
        return "scalar", None
    blocks = set()
    for a in comp.accesses:
        step = a.strided_by("pid0")
        if step.is_zero and a.kind == "load":
            continue  # a scalar or table every program reads (a hyper-parameter): the new blocks leave it as is
        contiguous = a.contiguous()
        lane = comp.var(contiguous) if contiguous else None
        if lane is None or lane.kind != LANE or len([v for v in a.offset.variables if v.startswith("lane")]) != 1:
            raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} is not one contiguous block of lanes "
                          "(a 2-D tile or a broadcast: row_tiles' case)")
        if step != Poly.of(lane.extent):
            raise Decline(f"line {a.line}: the program id moves the {a.kind} of {a.tensor} by {step}, not by the "
                          f"block of {lane.extent} lanes (a row stride: row_tiles' case)")
        blocks.add(lane.extent)
    if len(blocks) != 1:
        raise Decline(f"the accesses use different blocks ({', '.join(sorted(blocks))})")
    return "blocked", blocks.pop()


def _blocked(recipe: ScheduleRecipe, ks: KernelSource, block: str, target: TargetChoices) -> list:
    if block not in constexpr_params(ks):
        raise Decline(f"the block {block} is not a constexpr parameter")
    triton = imported_as(ks, "triton")
    launches = launch_grids(ks)
    candidates = []
    for size, warps in block_sizes(target):
        edits = []
        for call, grid in launches:
            arg = launch_argument(ks, call, block)
            old = _int_literal(arg)
            if old is not None and old >= size:
                raise Decline(f"already at blocks of {old} elements (>= {size}: 128-bit accesses for every thread)")
            if not isinstance(grid, ast.Lambda):  # a `lambda meta:` grid follows the block by itself
                grid0 = one_axis_grid(ks, call)
                edits.append(ks.text.replace(call.func.slice,
                                             f"({triton}.cdiv(({grid0}) * ({ks.segment(arg)}), {size}),)"))
            edits.append(ks.text.replace(arg, str(size)))
            if warps and not any(k.arg == "num_warps" for k in call.keywords):
                edits.append(append_argument(ks, call, f"num_warps={warps}"))
        rationale = (
            f"The kernel maps each element through the same function (the model classifies it as elementwise) "
            f"over blocks of `{block}`. Blocks of {size} elements give every thread whole 16-byte accesses "
            + (f"across {warps} warps" if warps else "in 32-byte granules of the unified buffer")
            + "; the grid is recomputed from the elements the draft covered, so its masks are unchanged."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Elementwise blocks of {size} (128-bit accesses)",
                                 rationale, config={block: size, **({"num_warps": warps} if warps else {})}))
    return candidates


def _scalar(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, target: TargetChoices) -> list:
    calls = [n for n in ast.walk(ks.fn) if isinstance(n, ast.Call)]
    pids = [n for n in calls if ks.is_tl(n, "program_id")]
    if not all(n.args and _int_literal(n.args[0]) == 0 for n in pids):
        raise Decline("the program id is not read as tl.program_id(0)")
    if any(isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Return)) for n in ast.walk(ks.fn)):
        raise Decline("the kernel branches or returns early (a scalar condition would become a block)")
    tl, triton = ks.tl, imported_as(ks, "triton")
    block, total, ok = ks.fresh("EW_BLOCK"), ks.fresh("n_elements_total"), ks.fresh("elem_ok")
    first = ks.fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):  # keep the docstring first
        first = ks.fn.body[1]
    lanes = f"{tl('program_id')}(0) * {block} + {tl('arange')}(0, {block})"
    kernel_edits = [
        ks.text.insert_before(first, f"{ks.text.indent(first)}{ok} = {lanes} < {total}  # one block of elements\n"),
        *[ks.text.replace(n, f"({lanes})") for n in pids],
        *[and_mask(ks, n, ok) for n in calls if ks.is_tl(n, "load", "store")],
    ]
    args = ks.fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    from ..source_edit import Edit

    kernel_edits.append(Edit(ks.text.end(args.args[-1]), ks.text.end(args.args[-1]), f", {total}"))
    kernel_edits.append(append_constexprs(ks, [block]))
    candidates = []
    for size, warps in block_sizes(target):
        edits = list(kernel_edits)
        for call, _ in launch_grids(ks):
            grid0 = one_axis_grid(ks, call)
            edits.append(ks.text.replace(call.func.slice, f"({triton}.cdiv({grid0}, {size}),)"))
            edits.append(append_argument(ks, call, f"{total}={grid0}, {block}={size}"
                                         + (f", num_warps={warps}" if warps else "")))
        rationale = (
            "Each program moved one element with scalar loads and stores (the model classifies the kernel as "
            f"elementwise, the program id stepping one element). It now moves a block of {size} elements, every "
            "access masked to the old grid's size, so each thread issues whole 16-byte accesses and the launch "
            f"starts {size}x fewer programs."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Blocks of {size} elements per program", rationale,
                                 config={block: size, **({"num_warps": warps} if warps else {})}))
    return candidates


def _grid_stride(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, target: TargetChoices) -> list:
    """A draft whose programs all walk every element (a loop over blocks, the program id unused: a grid of one
    program) -> a grid-stride loop over `programs_to_fill` programs, each starting at its own block."""
    loops = [v for v in comp.index_vars if v.kind == LOOP]
    if len(loops) != 1 or any("pid0" in (a.offset.variables if a.offset else ()) for a in comp.accesses):
        raise Decline("the kernel loops (a per-program loop over its own elements): not a flat elementwise map")
    if comp.accumulations:
        raise Decline(f"the loop carries {comp.accumulations[0].var} from one block to the next")
    var = loops[0]
    loop = loop_node(ks, var)
    parts = simple_range(loop)
    if not any(loop is s for s in ks.fn.body) or parts is None or parts[2] is None:
        raise Decline(f"line {loop.lineno}: the loop is not a top-level range() by a block")
    start, stop, step = parts
    block = ks.segment(step)
    lanes = {v.extent for v in comp.index_vars if v.kind == LANE}
    if lanes != {block} or block not in constexpr_params(ks) or not (isinstance(start, ast.Constant)
                                                                     and start.value == 0):
        raise Decline(f"line {loop.lineno}: the loop does not walk blocks of its lanes from 0")
    for a in comp.accesses:
        if var.name not in a.in_loops or a.strided_by(var.name) != var.step or a.contiguous() is None:
            raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} does not walk the loop's block")
    if any(isinstance(n, ast.Call) and ks.is_tl(n, "num_programs") for n in ast.walk(ks.fn)):
        raise Decline("the kernel reads tl.num_programs")
    tl = ks.tl
    kernel_edit = ks.text.replace(loop.iter, f"range({tl('program_id')}(0) * {block}, {ks.segment(stop)}, "
                                             f"{tl('num_programs')}(0) * {block})")
    launches = launch_grids(ks)
    candidates = []
    for size, warps in block_sizes(target):
        edits = [kernel_edit]
        for call, _ in launches:
            edits.append(ks.text.replace(call.func.slice, f"({target.programs_to_fill},)"))
            edits.append(ks.text.replace(launch_argument(ks, call, block), str(size)))
            if warps and not any(k.arg == "num_warps" for k in call.keywords):
                edits.append(append_argument(ks, call, f"num_warps={warps}"))
        rationale = (
            f"Every program of the draft walks all elements in blocks of `{block}` (the program id is unused): the "
            f"work runs on one program. The loop on line {loop.lineno} is now grid-stride over "
            f"{target.programs_to_fill} programs (enough to fill the device), each starting at its own block of "
            f"{size} elements."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Grid-stride elementwise loop ({size} per block)",
                                 rationale, config={block: size, **({"num_warps": warps} if warps else {})}))
    return candidates


def _build(recipe: ScheduleRecipe, ks: KernelSource, comp: Computation, kind: Kind) -> list:
    require_class(kind, ELEMENTWISE)
    if any(v.kind == LOOP for v in comp.index_vars):
        require_affine(comp.accesses)
        return _grid_stride(recipe, ks, comp, choices(ks.ctx.target))
    if any(v.kind == PROGRAM and v.name[3:].isdigit() and v.name != "pid0" for v in comp.index_vars):
        raise Decline("the kernel uses a second grid axis")
    require_affine(comp.accesses)
    if any(a.kind == "atomic" for a in comp.accesses):
        raise Decline("the kernel updates memory with atomics")
    target = choices(ks.ctx.target)
    shape, block = _shape(comp)
    if shape == "blocked":
        return _blocked(recipe, ks, block, target)
    return _scalar(recipe, ks, comp, target)


RECIPE = ScheduleRecipe(
    name="schedule-elementwise-blocks",
    title="Elementwise blocks sized for 128-bit accesses",
    build=_build,
)
