"""Ascend: launch one program per AI core and loop over the tiles inside the kernel (a persistent grid).

On Ascend every launched program is scheduled onto one of a few dozen cores; a grid of thousands pays a launch
and scheduling cost per program. The kernel body is wrapped in
`for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0))` with every `tl.program_id(0)` replaced by
`tile`, a parameter `n_tiles` is appended, and each launch in the file passes the old grid size as `n_tiles` and
launches `min(n_tiles, cores)` programs. The core count comes from the device table for the target (a guess named
in the rationale until a runner reports the real one). Declines for non-Ascend targets, grids of more than one
axis, kernels with `return`, tl.num_programs, defaulted parameters, or launches outside the file.
"""

from __future__ import annotations

import ast

from ...core.devices import DEVICES
from ...core.targets import is_ascend_target
from ..kernel_patterns import grid_node
from ..recipe_edits import append_argument, launches_for_new_parameter
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit, reindent


def _cores(ks: KernelSource) -> tuple[int, str]:
    spec = DEVICES.get("ascend910b")
    uses_cube = any(ks.is_tl(n, "dot") for n in ast.walk(ks.fn))
    count = spec.compute_units if uses_cube else spec.vector_units
    unit = "cube (AI) cores" if uses_cube else "vector cores"
    return int(count), f"{count} {unit} of the {spec.name} (device table)"


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    if not is_ascend_target(ks.ctx.target):
        raise Decline("a persistent grid targets Ascend's few large cores; on NVIDIA the hardware scheduler does this")
    fn = ks.fn
    program_ids = [n for n in ast.walk(fn) if ks.is_tl(n, "program_id")]
    for call in program_ids:
        axis = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
        if not (isinstance(axis, ast.Constant) and axis.value == 0):
            raise Decline(f"line {call.lineno}: a grid axis other than 0")
    if not program_ids:
        raise Decline("the kernel never reads tl.program_id")
    if any(isinstance(n, ast.Return) for n in ast.walk(fn)) or any(ks.is_tl(n, "num_programs") for n in ast.walk(fn)):
        raise Decline("the kernel returns early or reads tl.num_programs")
    args = fn.args
    sites = launches_for_new_parameter(ks)
    cores, where = _cores(ks)
    tiles, tile = ks.fresh("n_tiles"), ks.fresh("tile")
    edits: list[Edit] = []
    for site in sites:
        call = ks.node_at(site)
        grid = grid_node(ks, call)
        if isinstance(grid, ast.Lambda):
            raise Decline(f"the grid at line {site.span.line} is a function of the meta-parameters")
        if isinstance(grid, ast.Tuple):
            if len(grid.elts) != 1:
                raise Decline(f"the grid at line {site.span.line} has {len(grid.elts)} axes")
            count = ks.segment(grid.elts[0])
        else:
            count = f"{ks.segment(call.func.slice)}[0]"
        edits.append(ks.text.replace(call.func.slice, f"(min({count}, {cores}),)"))
        edits.append(append_argument(ks, call, f"{tiles}={count}"))
    # the new parameter goes last
    last = args.args[-1]
    edits.append(Edit(ks.text.end(last), ks.text.end(last), f", {tiles}"))
    body = fn.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
        body = body[1:]  # the docstring stays where it is
    indent = ks.text.indent(body[0])
    unit = indent[len(ks.text.indent(fn)) :] or "    "
    start, end = ks.text.statement_lines(body[0], body[-1])
    old = ks.text.source[start:end]
    for call in sorted(program_ids, key=lambda c: ks.text.start(c), reverse=True):
        lo, hi = ks.text.start(call) - start, ks.text.end(call) - start
        # a method call on the id (`.to(...)`) needs a tensor; the interpreter iterates Python ints
        method = isinstance(ks.parent(call), ast.Attribute)
        new = f"({tile} + 0 * {ks.tl('program_id')}(0))" if method else tile
        old = old[:lo] + new + old[hi:]
    try:
        inner = reindent(old, indent, indent + unit)
    except ValueError:
        raise Decline("the kernel body has lines with irregular indentation") from None
    header = f"{indent}for {tile} in range({ks.tl('program_id')}(0), {tiles}, {ks.tl('num_programs')}(0)):\n"
    edits.append(Edit(start, end, header + inner))
    rationale = (
        f"The grid launched one program per tile. It now launches at most {cores} programs, one per core "
        f"(**guess:** {where}), and each loops over tiles tile, tile + programs, ... up to the old grid size."
    )
    return [finish(recipe, ks.ctx, edits, f"Persistent grid: at most {cores} programs looping over tiles",
                   rationale, config={"programs": cores})]


RECIPE = SourceRecipe(
    name="persistent-grid",
    title="Ascend: a grid of one program per core with a loop over tiles",
    keys=("TL115", "TL404", "TL114"),
    build=_build,
)
