"""TL404 (launch grid against the device's AI cores) and TL406 (`tl.static_range` loops the compiler
unrolled completely)."""

from __future__ import annotations

import ast
import math

from ...core.findings import Evidence, Finding, Level, Severity
from ...core.rules import Confirms, Rule, register, register_check
from ..ir.ttadapter_model import Buffer
from .context import STAGE, AscendContext, kib
from .declare import ARCHITECTURE, ASCEND_FAMILY, PERFORMANCE_GUIDE, PROGRAMMING_GUIDE
from .devices import MAX_GRID_BLOCKS


def _over_cores(high: Finding, low: Finding) -> bool:
    blocks, cores = high.data.get("blocks"), high.data.get("cores")
    return isinstance(blocks, int) and isinstance(cores, int) and blocks > cores


def _over_launch_limit(high: Finding, low: Finding) -> bool:
    blocks = high.data.get("blocks")
    return isinstance(blocks, int) and blocks > 65535


GRID_VS_CORES = register(
    Rule(
        code="TL404",
        name="grid-not-matched-to-cores",
        title="The launch grid does not match the number of physical cores",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "On Ascend a program is bound to a physical core: a vector-only kernel runs one block per vector "
            "core (40 on 910B3), a cube/mix kernel one block per AI core (20 on 910B3). Blocks beyond the core "
            "count are dispatched in further rounds, each paying launch and initialization overhead; fewer "
            "blocks than cores leaves cores idle; more than 65,535 blocks is rejected. Launch exactly the core "
            "count and loop inside the kernel: `for block in range(tl.program_id(0), NUM_BLOCKS, "
            "tl.num_programs(0))`."
        ),
        references=(PROGRAMMING_GUIDE, PERFORMANCE_GUIDE, ARCHITECTURE),
        escalates_to=Severity.WARNING,
        escalation="when the grid exceeds the 65,535-block launch limit",
        confirms=(
            Confirms("TL115", "more programs than Ascend cores run in dispatch rounds", _over_cores),
            Confirms("TL114", "more than 65535 programs exceed Ascend's launch limit", _over_launch_limit),
        ),
    )
)


STATIC_RANGE_UNROLLED = register(
    Rule(
        code="TL406",
        name="static-range-unrolled-buffers",
        title="`tl.static_range` duplicated the loop body's loads",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "`tl.static_range` unrolls at trace time: ttadapter holds one staged load buffer per iteration. "
            "Each copy takes its own UB space and, since no loop remains, multibuffer cannot overlap the next "
            "load with this iteration's compute. Unless the body needs a compile-time index (e.g. to select a "
            "constexpr branch), write `range(N)` so the compiler keeps one loop with double-buffered loads."
        ),
        references=(PROGRAMMING_GUIDE, PERFORMANCE_GUIDE),
        confirms=(Confirms("TL119", "tl.static_range unrolls copies of the body's tiles"),),
    )
)




@register_check(ASCEND_FAMILY, GRID_VS_CORES)
def check_grid(ctx: AscendContext) -> list[Finding]:
    grid, launch_line = ctx.grid, ctx.launch_line
    if ctx.device is None or not grid:
        return []
    mix = ctx.module.mix_mode or "aiv"
    cube = mix in ("aic", "mix")
    cores = ctx.device.ai_cores if cube else ctx.device.vector_cores
    if not cores:
        return []
    blocks = math.prod(grid)
    unit = "AI cores (cube + 2 vector each)" if cube else "vector cores"
    line = launch_line or ctx.kernel_line()
    severity = None
    if blocks > MAX_GRID_BLOCKS:
        severity = Severity.WARNING
        what = f"{blocks} blocks exceed the runtime's {MAX_GRID_BLOCKS}-block launch limit"
    elif blocks > cores:
        rounds = math.ceil(blocks / cores)
        tail = blocks % cores
        tail_note = f"; the last round keeps only {tail} of {cores} busy" if tail else ""
        what = f"{blocks} blocks on {cores} {unit} run in {rounds} dispatch rounds{tail_note}"
    elif blocks < cores:
        what = f"{blocks} blocks leave {cores - blocks} of {cores} {unit} idle"
    else:
        return []
    message = (
        f"grid {grid} (mix_mode `{mix}`) on {ctx.device.soc}: {what}. Launch exactly {cores} programs and "
        "loop over the work inside the kernel (`for b in range(tl.program_id(0), NUM_BLOCKS, tl.num_programs(0))`)."
    )
    func_line = next((i for i, t in enumerate(ctx.module.text.splitlines(), 1) if "func.func" in t), None)
    evidence = [
        Evidence(
            kind="resource",
            summary=f"{ctx.device.soc}: {ctx.device.ai_cores} AI cores, {ctx.device.vector_cores} vector cores",
        ),
    ]
    if func_line:
        evidence.append(
            Evidence(
                kind="ir",
                summary=f'--triton-to-linalg marked the kernel mix_mode="{mix}"',
                stage=STAGE,
                excerpt=f'mix_mode = "{mix}"',
                ir_lines=(func_line,),
            )
        )
    gain = "one dispatch round and no idle cores" if blocks != cores else None
    data = {"grid": list(grid), "blocks": blocks, "cores": cores, "mix_mode": mix}
    return [ctx.finding(GRID_VS_CORES, line, message, evidence, gain, data, severity)]


def _static_range_loops(ctx: AscendContext) -> list[ast.For]:
    node = ctx.kernel_def()
    if node is None:
        return []
    loops = []
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call):
            func = stmt.iter.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "static_range":
                loops.append(stmt)
    return loops


@register_check(ASCEND_FAMILY, STATIC_RANGE_UNROLLED)
def check_static_range(ctx: AscendContext) -> list[Finding]:
    out: list[Finding] = []
    for loop in _static_range_loops(ctx):
        first, last = loop.body[0].lineno, loop.end_lineno or loop.lineno
        staged = [b for b in ctx.module.buffers if b.from_copy and b.op.line and first <= b.op.line <= last]
        per_line: dict[int, list[Buffer]] = {}
        for b in staged:
            per_line.setdefault(b.op.line or 0, []).append(b)
        copies = max((len(v) for v in per_line.values()), default=0)
        if copies < 2:
            continue
        total = sum(b.type.bytes or 0 for b in staged)
        load_lines = sorted(per_line)
        message = (
            f"`{ctx.snippet(loop.lineno)}` was unrolled at trace time: ttadapter stages the load on line(s) "
            f"{', '.join(map(str, load_lines))} {copies} times ({kib(total)} of buffers, no loop left for "
            "multibuffer to overlap). Use `range(...)` unless the body needs a compile-time index."
        )
        evidence = [
            ctx.ir_evidence(
                f"{len(staged)} staged load buffers from one loop body", [b.op.ir_line for b in staged]
            )
        ]
        gain = f"{kib(total)} of unrolled buffers shrink to one double-buffered tile"
        data = {"copies": copies, "buffer_bytes": total, "load_lines": load_lines}
        out.append(ctx.finding(STATIC_RANGE_UNROLLED, loop.lineno, message, evidence, gain, data))
    return out
