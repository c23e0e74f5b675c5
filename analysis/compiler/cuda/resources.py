"""NVIDIA checks on resources: register spills, and registers/shared memory limiting occupancy (from ptxas)."""

from __future__ import annotations

from ...core.findings import Evidence, Severity
from ...core.rules import DependsOn, register_check
from .context import Context, as_int
from .declare import _OCC, _SPECS, CHECK_FAMILY, cuda_rule
from .dots import pipelined_tensor_core_loop
from .limits import occupancy

SPILLS = cuda_rule(
    "TL308",
    "register-spills",
    "ptxas spilled registers to local memory",
    Severity.WARNING,
    "When the kernel needs more live values than the 255-register limit (or the limit implied by "
    "`maxnreg`/occupancy), ptxas stores some to local memory (`STL`) and reloads them (`LDL`). Local memory is "
    "backed by L1/L2/DRAM, so spills in a loop add latency and traffic.\n\nFix: smaller tiles "
    "(BLOCK_M/BLOCK_N), fewer live accumulators, more warps (spreading the tile over more threads), or "
    "fewer pipeline stages.",
    _SPECS,
    depends_on=DependsOn.COMPILE,  # the whole compile's budget
)


OCC_REGS = cuda_rule(
    "TL309",
    "occupancy-limited-by-registers",
    "Registers per thread limit how many warps an SM can hold",
    Severity.INFO,
    "Each SM has 64K 32-bit registers, allocated per warp in units of 256. Registers per thread x threads per "
    "block decides how many blocks fit; with few resident warps the SM cannot hide memory latency unless the "
    "kernel has enough independent work per warp.\n\nFix: fewer live values (smaller tiles); compare achieved "
    "bandwidth in the profile. Not reported for a tensor-core loop whose loads all went asynchronous: such GEMMs "
    "keep the accumulator in registers and run one large block per SM by design.",
    _OCC,
    _SPECS,
    depends_on=DependsOn.COMPILE,  # the whole compile's budget
)


OCC_SMEM = cuda_rule(
    "TL310",
    "occupancy-limited-by-shared-memory",
    "Shared memory per block limits how many blocks an SM can hold",
    Severity.INFO,
    "Triton allocates shared memory for pipeline buffers (num_stages x tile sizes), layout conversions and "
    "reductions. Per-SM capacity (plus 1 KB reserved per block) divided by the block's use bounds resident "
    "blocks.\n\nFix: fewer stages or smaller BLOCK_K.",
    _OCC,
    _SPECS,
    depends_on=DependsOn.COMPILE,  # the whole compile's budget
)


SMEM_LIMIT = cuda_rule(
    "TL311",
    "shared-memory-over-limit",
    "Shared memory exceeds what one block can use on this GPU",
    Severity.ERROR,
    "A block can opt in to at most 227 KB of shared memory on sm_90/sm_100, 163 KB on sm_80 and 99 KB on "
    "sm_86/sm_89. Triton raises OutOfResources at launch when the compiled kernel needs more.\n\nFix: reduce "
    "num_stages, BLOCK_K or the tile sizes.",
    _SPECS,
)




@register_check(CHECK_FAMILY, SPILLS)
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
        SPILLS,
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


@register_check(CHECK_FAMILY, OCC_REGS, OCC_SMEM, SMEM_LIMIT)
def check_resources(ctx: Context) -> None:
    if ctx.limits is None:
        return
    shared = as_int(ctx.resources.get("shared"), 0)
    regs = as_int(ctx.resources.get("registers"), 0)
    line = _def_line(ctx)
    lim = ctx.limits
    if shared > lim.shared_per_block:
        ctx.add(
            SMEM_LIMIT,
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
    rule = OCC_REGS if occ.limiter == "registers" else OCC_SMEM
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
