"""Replace one atomic per program on a single address with per-program partials and a second reduction.

    tl.atomic_add(loss_ptr, value)          # every program, the same address

serialises all programs on one memory location (and makes the float sum order nondeterministic). Each program
now stores its value into its own slot of a zero-initialised partials buffer, and the launching wrapper adds the
sum of the partials into the original output after the launch. It needs the launch in the same file with a
tuple grid and a plain variable as the output argument, an atomic that is not inside a loop (one value per
program), and no other use of the pointer in the kernel.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import count_name, grid_node
from ..recipe_edits import imported_as
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit


def _atomic(ks: KernelSource) -> tuple[ast.Expr, str]:
    params = {p.name for p in ks.info.params}
    found = []
    for node in ast.walk(ks.fn):
        if ks.is_tl(node, "atomic_add"):
            parent = ks.parent(node)
            pointer = node.args[0] if node.args else None
            if isinstance(pointer, ast.Name) and pointer.id in params:
                found.append((parent, node, pointer.id))
    if len(found) != 1:
        raise Decline(f"{len(found)} atomic_add calls on a bare pointer parameter; this recipe handles one")
    stmt, call, name = found[0]
    if not isinstance(stmt, ast.Expr) or len(call.args) != 2 or call.keywords:
        raise Decline(f"line {call.lineno}: the atomic's result is used, or it has a mask or options")
    node = stmt
    while node is not ks.fn:
        node = ks.parent(node)
        if isinstance(node, ast.For | ast.While):
            raise Decline(f"line {call.lineno}: the atomic is inside a loop (several per program)")
    if count_name([ks.fn], name) - count_name(ks.fn.args.args, name) != 1:
        raise Decline(f"{name} is used elsewhere in the kernel")
    return stmt, name


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    stmt, pointer = _atomic(ks)
    torch = imported_as(ks, "torch")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file: the partials need the wrapper")
    ranks = set()
    edits: list[Edit] = []
    for site in sites:
        call = ks.node_at(site)
        grid = grid_node(ks, call)
        if not isinstance(grid, ast.Tuple) or not grid.elts:
            raise Decline(f"the grid at line {site.span.line} is not a tuple")
        ranks.add(len(grid.elts))
        arg = site.bind(ks.info).get(pointer)
        if arg is None or arg.name is not None and arg.name != pointer:
            raise Decline(f"the launch at line {site.span.line} does not pass {pointer}")
        arg_node = next(
            (a for a in [*call.args, *(k.value for k in call.keywords)]
             if (a.lineno, a.col_offset) == (arg.span.line, a.col_offset) and ks.segment(a) == arg.text),
            None,
        )
        if arg_node is None or not isinstance(arg_node, ast.Name):
            raise Decline(f"the launch at line {site.span.line} passes `{arg.text}`, not a variable")
        launch = ks.enclosing_statement(call)
        if not isinstance(launch, ast.Expr) or launch.value is not call:
            raise Decline(f"the launch at line {site.span.line} is not a statement of its own")
        out = arg_node.id
        partials = ks.fresh(f"{out}_partials")
        count = " * ".join(f"({ks.segment(e)})" for e in grid.elts)
        indent = ks.text.indent(launch)
        edits.append(ks.text.insert_before(
            launch, f"{indent}{partials} = {torch}.zeros({count}, dtype={out}.dtype, device={out}.device)\n"
        ))
        edits.append(ks.text.replace(arg_node, partials))
        edits.append(ks.text.insert_after(launch, f"{indent}{out}.view(-1)[0] += {partials}.sum()\n"))
    if len(ranks) != 1:
        raise Decline("launches with grids of different rank")
    rank = ranks.pop()
    pid = [f"{ks.tl('program_id')}({axis})" for axis in range(rank)]
    num = [f"{ks.tl('num_programs')}({axis})" for axis in range(rank)]
    linear = pid[0]
    for axis in range(1, rank):
        linear += f" + {pid[axis]} * " + " * ".join(num[:axis])
    value = ks.segment(stmt.value.args[1])
    edits.append(ks.text.replace(stmt.value, f"{ks.tl('store')}({pointer} + {linear}, {value})"))
    rationale = (
        f"Every program added into the single address `{pointer}` with tl.atomic_add, serialising them on one "
        "location. Each program now stores its value into its own slot of a zeroed partials buffer and the "
        "wrapper adds the partials' sum after the launch (deterministic, one extra small reduction)."
    )
    return [finish(recipe, ks.ctx, edits, "Per-program partials instead of a single-address atomic", rationale)]


RECIPE = SourceRecipe(
    name="atomic-partials",
    title="Per-program partials and a second reduction instead of a single-address atomic",
    keys=("TL132", "TL112"),
    build=_build,
)
