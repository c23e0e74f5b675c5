"""Re-choose the block size and num_warps together at the launch site.

A first draft often launches with BLOCK_SIZE=64..256 and the default num_warps: short vectors, many loop
iterations or many tiny programs. This recipe proposes larger powers of two with a matching num_warps, edits the
launch (and a grid computed from the same literal), and leaves the kernel unchanged. It applies when the kernel
has exactly one block-size constexpr used by tl.arange and every launch in the file passes it as an int literal;
autotuned kernels and kernels with several block sizes are left to the config search.
"""

from __future__ import annotations

import ast

from ...core.targets import is_ascend_target
from ..kernel_patterns import grid_node
from ..recipe_edits import append_argument
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

# block size -> num_warps: about 8-16 elements per thread for a 1D block
CHOICES = ((1024, 4), (2048, 8), (4096, 16))


def _block_param(ks: KernelSource) -> str:
    used = set()
    for node in ast.walk(ks.fn):
        if ks.is_tl(node, "arange") and len(node.args) == 2 and isinstance(node.args[1], ast.Name):
            used.add(node.args[1].id)
    blocks = [p.name for p in ks.info.params if p.is_constexpr and p.name in used]
    if len(blocks) != 1:
        raise Decline(f"{len(blocks)} block-size constexprs used by tl.arange; this recipe handles exactly one")
    return blocks[0]


def _literal_node(ks: KernelSource, call: ast.Call, block: str) -> ast.Constant:
    for kw in call.keywords:
        if kw.arg == block and isinstance(kw.value, ast.Constant):
            return kw.value
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    index = positional.index(block) if block in positional else len(call.args)
    if index < len(call.args) and isinstance(call.args[index], ast.Constant):
        return call.args[index]
    raise Decline(f"cannot locate the {block} literal at line {call.lineno}")


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    if ks.info.autotune is not None:
        raise Decline("the kernel is autotuned: block sizes are the config search's job")
    block = _block_param(ks)
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    ascend = is_ascend_target(ks.ctx.target)
    plans = []  # per site: (literal node, old value, grid literals, warps keyword, call)
    for site in sites:
        arg = site.bind(ks.info).get(block)
        if arg is None or not arg.has_literal or not isinstance(arg.value, int):
            raise Decline(f"the launch at line {site.span.line} does not pass {block} as an int literal")
        call = ks.node_at(site)
        literal = _literal_node(ks, call, block)
        grid = grid_node(ks, call)
        if isinstance(grid, ast.Lambda):
            grid_literals = []  # reads the block from meta
        else:
            grid_literals = [n for n in ast.walk(grid) if isinstance(n, ast.Constant) and n.value == arg.value]
        warps = next((kw for kw in call.keywords if kw.arg == "num_warps"), None)
        plans.append((literal, arg.value, grid_literals, warps, call))
    old = max(p[1] for p in plans)
    candidates = []
    for size, warps in CHOICES:
        if size <= old:
            continue
        edits: list[Edit] = []
        for literal, _value, grid_literals, warps_kw, call in plans:
            edits.append(ks.text.replace(literal, str(size)))
            edits.extend(ks.text.replace(n, str(size)) for n in grid_literals)
            if ascend:
                continue
            if warps_kw is not None:
                edits.append(ks.text.replace(warps_kw.value, str(warps)))
            else:
                edits.append(append_argument(ks, call, f"num_warps={warps}"))
        config = {block: size} if ascend else {block: size, "num_warps": warps}
        shown = ", ".join(f"{k}={v}" for k, v in config.items())
        rationale = (
            f"The launch used {block}={old}. Larger blocks move more bytes per program and per loop iteration; "
            f"this candidate launches {shown} (the grid follows where it was computed from the same literal). "
            "Only a measurement tells which size wins."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Launch with {shown}", rationale, config=config))
    if not candidates:
        raise Decline(f"{block}={old} is already at least {CHOICES[-1][0]}")
    return candidates


RECIPE = SourceRecipe(
    name="block-size-warps",
    title="Re-choose the block size and num_warps together",
    keys=("TL103", "TL126", "TL127", "TL202", "TL205", "TL206"),
    build=_build,
)
