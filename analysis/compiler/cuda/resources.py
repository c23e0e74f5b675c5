"""NVIDIA checks on resources: register spills, and registers/shared memory limiting occupancy (from ptxas)."""

from __future__ import annotations

from ...core.findings import Evidence
from . import rules as R
from .context import Context, as_int
from .dots import pipelined_tensor_core_loop
from .limits import occupancy


def check_spills(ctx: Context) -> None:
    stores = as_int(ctx.resources.get("spill_stores"), 0)
    loads = as_int(ctx.resources.get("spill_loads"), 0)
    spill_lines = sorted(
        ln
        for ln, st in ctx.lines.items()
        if st.count("sass", "local_store") or st.count("sass", "local_load")
    )
    if not stores and not loads and not spill_lines:
        return
    regs = as_int(ctx.resources.get("registers"), 0)
    line = _def_line(ctx)
    where = (
        f"; spill code is attributed to line(s) {', '.join(map(str, spill_lines[:8]))}" if spill_lines else ""
    )
    ev = [
        Evidence(
            "resource",
            f"ptxas: {regs} registers, {stores} bytes spill stores, {loads} bytes spill loads",
            "ptxas",
        )
    ]
    if spill_lines:
        st = ctx.lines[spill_lines[0]]
        ev.append(ctx.excerpt("sass", st.ir_lines.get("sass", [])[:6]))
    ctx.add(
        R.SPILLS,
        line,
        f"ptxas register allocation ran out of registers ({regs} used, limit 255) and spilled {stores} bytes "
        f"to local memory (reloading {loads} bytes){where}.",
        ev,
        "removing spills typically gains 10-50% on compute-bound kernels",
        "reduce BLOCK_M/BLOCK_N, or raise num_warps so each thread holds fewer accumulator elements",
        spill_stores=stores,
        spill_loads=loads,
        spill_lines=spill_lines,
    )


def _def_line(ctx: Context) -> int:
    for module in (ctx.parsed.ttgir, ctx.parsed.ttir):
        if module is None:
            continue
        chain = module.func_locs.get(ctx.kernel) or next(iter(module.func_locs.values()), None)
        if chain and chain.frames:
            return chain.frames[0].line
    return 1


def check_resources(ctx: Context) -> None:
    if ctx.limits is None:
        return
    shared = as_int(ctx.resources.get("shared"), 0)
    regs = as_int(ctx.resources.get("registers"), 0)
    line = _def_line(ctx)
    lim = ctx.limits
    if shared > lim.shared_per_block:
        ctx.add(
            R.SMEM_LIMIT,
            line,
            f"The kernel needs {shared // 1024} KB of shared memory (num_stages={ctx.num_stages}), more than the "
            f"{lim.shared_per_block // 1024} KB a block can use on {lim.name}; the launch fails with "
            "OutOfResources.",
            [Evidence("resource", f"compiler metadata: shared = {shared} bytes", "metadata")],
            None,
            "lower num_stages or BLOCK_K, or shrink the tiles",
            shared=shared,
            limit=lim.shared_per_block,
        )
        return
    if not regs:
        return
    occ = occupancy(lim, ctx.num_warps, regs, shared)
    if occ.fraction >= 0.25 or occ.limiter not in ("registers", "shared memory"):
        return
    if occ.limiter == "registers" and pipelined_tensor_core_loop(ctx):
        return  # a pipelined tensor-core GEMM keeps its accumulator in registers: low occupancy by design
    rule = R.OCC_REGS if occ.limiter == "registers" else R.OCC_SMEM
    detail = (
        f"{regs} registers x {ctx.num_warps * 32} threads per block"
        if occ.limiter == "registers"
        else f"{shared // 1024} KB shared memory per block"
    )
    ctx.add(
        rule,
        line,
        f"Only {occ.blocks_per_sm} block(s) = {occ.warps_per_sm} of {lim.max_warps_per_sm} warps fit per SM on "
        f"{lim.name} ({occ.fraction:.0%} occupancy), limited by {occ.limiter}: {detail}.",
        [Evidence("resource", f"registers={regs}, shared={shared}, num_warps={ctx.num_warps}", "ptxas")],
        "more resident warps hide more memory latency (gain depends on the kernel's bound)",
        "smaller tiles or fewer stages" if occ.limiter == "shared memory" else "fewer live values per thread",
        occupancy=round(occ.fraction, 3),
        limiter=occ.limiter,
    )
