"""Level-2 (profiling) rules: TL2xx. Each finding is computed by analysis/profile/analyze.py from a runner's measured
launch times, the bytes and FLOPs the recorded arguments imply, the device's ceilings (analysis/core/devices.py) and,
when Nsight Compute ran, its per-source-line counters."""

from __future__ import annotations

from ..core.findings import Level, Severity
from ..core.rules import Confirms, Rule, register

_BOTH = ("cuda", "ascend")
_NV = ("cuda",)
_ROOFLINE = "https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#roofline"

NEAR_ROOFLINE = register(
    Rule(
        code="TL201",
        name="near-roofline",
        title="Kernel already runs near the device's ceiling",
        level=Level.PROFILE,
        severity=Severity.INFO,
        platforms=_BOTH,
        rationale=(
            "The measured time is within reach of the floor set by the bytes the launch must move (or the FLOPs "
            "it must do) over the device's ceiling. No rewrite of this kernel can gain more than the remaining "
            "gap, so tritonlens stops escalating here: look at fusing it with its neighbours instead."
        ),
        references=(_ROOFLINE,),
    )
)
LOW_BANDWIDTH = register(
    Rule(
        code="TL202",
        name="memory-bound-below-roofline",
        title="Memory-bound kernel far below the bandwidth ceiling",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_BOTH,
        rationale=(
            "The launch moves few FLOPs per byte, so its floor is bytes / bandwidth, and it runs well above that "
            "floor. Usual causes, in order: more bytes moved than needed (uncoalesced or strided access, "
            "re-reads), too little work in flight (small grid, low occupancy), index arithmetic. Nsight Compute's "
            "source view (TL207) points at the line when it ran."
        ),
        references=(_ROOFLINE,),
    )
)
SMALL_GRID = register(
    Rule(
        code="TL203",
        name="grid-underfills-device",
        title="Fewer programs than SMs / AI cores",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_BOTH,
        rationale=(
            "Each Triton program runs on one SM (NVIDIA) or one AI core (Ascend). A grid with fewer programs "
            "than the device has leaves the rest idle for the whole launch. Split the work into more, smaller "
            "programs (smaller BLOCK, split-K, or a persistent loop sized to the core count)."
        ),
    )
)
WAVE_TAIL = register(
    Rule(
        code="TL204",
        name="wave-tail",
        title="Last wave of programs leaves most of the device idle",
        level=Level.PROFILE,
        severity=Severity.INFO,
        platforms=_BOTH,
        rationale=(
            "Programs run in waves of (cores x resident programs per core). When the last wave is nearly empty "
            "the device idles for a whole wave's time. Choosing a BLOCK that makes the program count a multiple "
            "of the wave size, or a persistent kernel, removes the tail."
        ),
    )
)
LOW_OCCUPANCY = register(
    Rule(
        code="TL205",
        name="low-occupancy",
        title="Few warps resident per SM (registers or shared memory limit them)",
        level=Level.PROFILE,
        severity=Severity.INFO,
        platforms=_NV,
        rationale=(
            "Memory latency is hidden by other warps. When registers per thread or shared memory per program "
            "allow only a few programs per SM, a memory-bound kernel cannot keep enough loads in flight. Lower "
            "num_stages or BLOCK sizes, or raise num_warps, to fit more."
        ),
    )
)
TINY_LAUNCHES = register(
    Rule(
        code="TL206",
        name="launch-overhead",
        title="Many launches of a kernel that runs only microseconds",
        level=Level.PROFILE,
        severity=Severity.INFO,
        platforms=_BOTH,
        rationale=(
            "A launch costs a few microseconds on the host whatever the kernel does. Kernels that finish in that "
            "time are bound by launch overhead: fuse them with their neighbours or capture them in a CUDA graph."
        ),
    )
)
UNCOALESCED = register(
    Rule(
        code="TL207",
        name="uncoalesced-global-access",
        title="Line moves many more L2 sectors than its accesses need (Nsight Compute)",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_NV,
        rationale=(
            "Nsight Compute counts, per source line, the L2 sectors global loads and stores touched against the "
            "ideal for the bytes they use. A large excess means neighbouring threads access addresses far apart "
            "(e.g. a store strided by a row): make the contiguous dimension the fastest-varying index of the "
            "block, or go through a 2-D tile so both sides are contiguous."
        ),
        references=("https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#memory-tables",),
        confirms=(
            Confirms("TL109", "a strided innermost index wastes L2 sectors"),
            Confirms("TL131", "lanes a row apart (a column walk) waste L2 sectors"),
        ),
    )
)
STALL_HOTSPOT = register(
    Rule(
        code="TL208",
        name="stall-hotspot",
        title="Most warp stall samples fall on one line (Nsight Compute)",
        level=Level.PROFILE,
        severity=Severity.HINT,
        platforms=_NV,
        rationale=(
            "Warp stall sampling shows where warps wait and why (long_sb: global memory; mio / lg: memory "
            "instruction queues; barrier: a __syncthreads-style barrier, e.g. a layout conversion through shared "
            "memory). The line that collects most samples is where a rewrite pays."
        ),
    )
)
LOW_COMPUTE = register(
    Rule(
        code="TL209",
        name="compute-bound-below-roofline",
        title="Compute-bound kernel far below the matrix-unit ceiling",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_BOTH,
        rationale=(
            "The launch does many FLOPs per byte (a tl.dot), so its floor is FLOPs / matrix rate, and it runs far "
            "above it. Check block sizes (the matrix units want 64+ along M and N), num_stages for pipelining, "
            "and operand dtypes (fp32 dots run as tf32 at half the bf16 rate)."
        ),
        references=(_ROOFLINE,),
    )
)
NO_TENSOR_CORES = register(
    Rule(
        code="TL210",
        name="compute-bound-without-tensor-cores",
        title="Compute-bound matrix work on the FMA units instead of tensor cores",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_BOTH,
        rationale=(
            "The compiled kernel does far more floating-point work per byte than the device's ridge point (FLOPs "
            "counted from its IR: multiply-adds per loop trip times trip counts) but contains no `tt.dot`, so "
            "every multiply-add runs on the CUDA cores (Ascend: the vector unit) at the fp32 FMA rate, 15x below "
            "the bf16 tensor-core rate on an H100/H200. The kernel is not slow because of memory: its ceiling is "
            "the FMA rate, and the way past it is the matrix unit.\n\n"
            "**Fix:** restructure the inner loop as `tl.dot` on [BLOCK_M, BLOCK_K] x [BLOCK_K, BLOCK_N] tiles "
            "(the matmul tutorial); TL107/TL133 point at the loop."
        ),
        references=(
            _ROOFLINE,
            "https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html",
        ),
    )
)
MANY_TINY_PROGRAMS = register(
    Rule(
        code="TL211",
        name="many-tiny-programs",
        title="Thousands of waves of programs that each do very little",
        level=Level.PROFILE,
        severity=Severity.WARNING,
        platforms=_BOTH,
        rationale=(
            "Each program has a fixed cost: scheduling a CTA (NVIDIA) or an AI-core task (Ascend), computing its "
            "offsets, and the ramp-up/ramp-down of its memory pipeline. When the grid makes thousands of waves "
            "and each program moves only a few hundred bytes, these fixed costs dominate and the device never "
            "reaches its bandwidth.\n\n"
            "**Fix:** give each program more work: a larger BLOCK, several rows per program, or a persistent "
            "grid of about (SMs x programs per SM) programs looping over the tiles."
        ),
        references=(_ROOFLINE,),
    )
)
