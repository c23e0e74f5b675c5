"""Launch-grid rules for literal grids: hardware limits on both platforms and Ascend's core-bound grids."""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..kernels import LaunchSite
from ..source.numbers import data_number, number_text
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext

ASCEND_MAX_GRID = 65535  # coreDim is a uint16 in the Ascend runtime launch call
# Atlas A2 (910B) parts have 20-24 AI cores / 40-48 vector cores; above ~1024 programs the runtime dispatches
# more than 20 waves of tasks, which is where the documented batching overhead dominates small kernels.
ASCEND_MANY_PROGRAMS = 1024
CUDA_MAX_GRID = (2**31 - 1, 65535, 65535)

ASCEND_GRID_LIMIT = register(
    Rule(
        code="TL114",
        name="ascend-grid-over-65535",
        title="Grid larger than 65535 programs (Ascend launch limit)",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("ascend",),
        rationale=(
            "On Ascend the grid is a number of AI-core tasks and the runtime takes it as `coreDim`, the product "
            "of all grid dimensions, which must be at most 65535; larger launches fail with *grid should be less "
            "than 65536*. GPU kernels that launch one program per row or per small block hit this on long "
            "sequences.\n\n**Fix:** launch about as many programs as there are cores "
            "(`grid = (num_cores,)`) and loop over the work inside the kernel: "
            "`for block in range(pid, num_blocks, tl.num_programs(0))`."
        ),
        references=(ref.ASCEND_ISSUE_GRID_65536, ref.ASCEND_VLLM_GRID_FIX, ref.ASCEND_MIGRATE),
    )
)

ASCEND_MANY_CORES = register(
    Rule(
        code="TL115",
        name="ascend-grid-far-above-core-count",
        title="Grid far larger than the number of Ascend AI cores",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "On NVIDIA a large logical grid is cheap: the hardware schedules CTAs onto SMs. On Ascend each program "
            "is bound to a physical AI core (20-24 cube / 40-48 vector cores on Atlas A2), and programs beyond that "
            "count are dispatched in serial batches, each paying launch and pipeline warm-up cost; the migration "
            "guide calls this out as the first thing to check.\n\n**Fix:** set the grid to the number of AI cores "
            "(vector cores for kernels without `tl.dot`) reported by the NPU driver and loop over blocks inside "
            "the kernel with a stride of `tl.num_programs(0)`; or set `TRITON_ALL_BLOCKS_PARALLEL=1` when the "
            "programs are independent."
        ),
        references=(ref.ASCEND_ARCH_DIFF, ref.ASCEND_PERF, ref.ASCEND_VECTOR_OPS),
    )
)

CUDA_GRID_LIMIT = register(
    Rule(
        code="TL121",
        name="cuda-grid-dimension-limit",
        title="Grid dimension above CUDA's limit",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("cuda",),
        rationale=(
            "CUDA limits grids to 2**31-1 blocks in x and 65535 in y and z; a Triton launch beyond that fails "
            "with *invalid argument*. Putting the large dimension (rows, tokens) on axis 1 or 2 is the usual "
            "cause.\n\n**Fix:** put the largest dimension on axis 0 (`tl.program_id(0)`), or fold the extra "
            "programs into a loop inside the kernel."
        ),
        references=(ref.CUDA_GUIDE_LIMITS, ref.TRITON_ISSUE_GRID_TOO_LARGE),
    )
)


def literal_grid(launch: LaunchSite) -> tuple[int, ...] | None:
    grid = launch.grid_value if launch.grid_value is not None else launch.grid_resolved_value
    if grid is None or not grid or not all(isinstance(g, int) and not isinstance(g, bool) for g in grid):
        return None
    return grid


@kernel_check
def grid_limits(ctx: KernelContext) -> Iterator[Finding]:
    for launch in ctx.launches:
        grid = literal_grid(launch)
        if grid is None:
            continue
        total = prod(grid)
        shown = launch.grid_resolved_text if launch.grid_value is None else launch.grid_text
        data = {"grid": [data_number(g) for g in grid], "programs": data_number(total)}
        if total > ASCEND_MAX_GRID:
            message = f"grid {shown} = {number_text(total)} programs exceeds Ascend's limit of {ASCEND_MAX_GRID}"
            yield finding(ASCEND_GRID_LIMIT, ctx, launch.grid_span, message, data=data)
        elif total > ASCEND_MANY_PROGRAMS:
            message = f"grid {shown} = {number_text(total)} programs, far above the 20-48 AI cores of an Ascend NPU"
            yield finding(ASCEND_MANY_CORES, ctx, launch.grid_span, message, data=data)
        for axis, (size, limit) in enumerate(zip(grid, CUDA_MAX_GRID, strict=False)):
            if size > limit:
                message = f"grid axis {axis} = {number_text(size)} exceeds CUDA's limit of {limit} for that axis"
                yield finding(CUDA_GRID_LIMIT, ctx, launch.grid_span, message, data={**data, "axis": axis})
