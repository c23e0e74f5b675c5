"""TL3xx: NVIDIA compiler-grounded rules (the checks live in compiler_cuda.py), with the triage and profiling
findings each one confirms and the guessed values its findings depend on."""

from __future__ import annotations

from typing import Any

from ...core.findings import Finding, Level, Severity
from ...core.rules import Confirms, DependsOn, Rule, register

_AXIS = "https://github.com/triton-lang/triton/blob/main/lib/Analysis/AxisInfo.cpp"
_COALESCE = "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"
_LOADSTORE = "https://github.com/triton-lang/triton/blob/main/third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp"
_GUIDE_MEM = (
    "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#coalesced-access-to-global-memory"
)
_SPECS = (
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications"
)
_OCC = "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#occupancy"
_ACCEL = (
    "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp"
)
_PIPE = "https://github.com/triton-lang/triton/tree/main/lib/Dialect/TritonGPU/Transforms/Pipeliner"
_RLC = "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"
_PTX_ISA = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
_TUTORIAL_MM = "https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html"

CUDA = ("cuda",)


def _rule(code: str, name: str, title: str, severity: Severity, rationale: str, *refs: str, **more: Any) -> Rule:
    return register(Rule(code, name, title, Level.COMPILER, severity, CUDA, rationale, tuple(refs), **more))


# --- when a TL3xx finding confirms a lower-level one (analysis/core/escalation.py) ----------------------------


def _same_loop(high: Finding, low: Finding) -> bool:
    # TL314 has two kinds; only "loop-invariant" is TL106's cause, and both record the loop's line.
    return high.data.get("kind") == "loop-invariant" and high.data.get("loop_line") == low.data.get("loop_line")


def _fp32_operands(high: Finding, low: Finding) -> bool:
    # TL305 also fires for small tiles or integer operands; with fp32 operands and `ieee` in the source
    # (TL111) its first branch, "fp32 with input_precision='ieee'", is the one taken.
    return high.data.get("operand_type") == "f32"


def _strided(high: Finding, low: Finding) -> bool:
    return high.data.get("cause") == "stride"


def _scattered(high: Finding, low: Finding) -> bool:
    # Excess sectors come from lanes far apart (stride, gather); unaligned or masked but contiguous scalar
    # accesses (TL302/TL303) still coalesce, so they do not explain TL207.
    return high.data.get("cause") in ("stride", "gather")


NOT_CONTIGUOUS = _rule(
    "TL301",
    "global-access-not-contiguous",
    "Global load/store is not vectorized: the address is not provably contiguous",
    Severity.WARNING,
    "Triton's AxisInfo analysis computes, for every pointer tensor, how many consecutive elements along the "
    "fastest dimension are contiguous. The coalesce pass gives each thread that many elements (up to 16 bytes) "
    "and the lowering emits one `ld.global.v4`/`LDG.E.128` per thread. When the offset is multiplied by a "
    "runtime stride or comes from a loaded index (a gather), contiguity is 1 and every element becomes its own "
    "32-bit (or narrower) transaction, multiplying instructions and, for strides, the memory sectors fetched.\n\n"
    "Fix: make the contiguous index the innermost one (`base + row * stride + cols`), pass unit strides so "
    "Triton specializes them to 1, or transpose the data once so gathers read whole rows.",
    _AXIS,
    _COALESCE,
    _GUIDE_MEM,
    confirms=(
        Confirms("TL109", "the innermost index is multiplied by a stride", _strided),
        Confirms("TL207", "neighbouring lanes access addresses far apart", _scattered),
        Confirms("TL131", "the innermost index is multiplied by the row length", _strided),
    ),
)
UNALIGNED = _rule(
    "TL302",
    "global-access-unaligned",
    "Global load/store is not vectorized: alignment of the address is unknown",
    Severity.WARNING,
    "Vector loads need the first element of each thread's chunk to be 16-byte aligned. AxisInfo proves that "
    "from `tt.divisibility` on kernel arguments (Triton adds it at launch for pointers aligned to 16 bytes and "
    "integers divisible by 16). An integer argument without it (a row stride, an offset) used in the address "
    "makes the alignment unknown, and the lowering falls back to scalar accesses.\n\n"
    "Fix: make strides/sizes multiples of 16 elements (pad rows), or let Triton specialize them (do not mark "
    "them `do_not_specialize`); `tl.multiple_of(x, 16)` asserts it when you know it holds.",
    _AXIS,
    _LOADSTORE,
)
MASK = _rule(
    "TL303",
    "mask-defeats-vectorization",
    "The mask's granularity forces scalar accesses",
    Severity.WARNING,
    "A masked load can only be vectorized if the mask is constant over each vector (AxisInfo 'constancy'). "
    "`offs < n` with `n` not known divisible by 16 gives constancy 1, so the lowering splits every vector "
    "access into scalar predicated ones even though the pointer itself is contiguous and aligned.\n\n"
    "Fix: let `n` be specialized as divisible by 16 (pad the tensor), or split off the ragged tail into a "
    "separate masked launch and use an unmasked (or `EVEN_N: tl.constexpr`) path for full blocks.",
    _AXIS,
    _LOADSTORE,
)
CONVERT = _rule(
    "TL304",
    "layout-conversion-through-shared-memory",
    "A layout conversion round-trips through shared memory",
    Severity.INFO,
    "`ttg.convert_layout` between distributed layouts that move data across threads is lowered to a store to "
    "shared memory, a barrier and a load back. RemoveLayoutConversions removes the ones it can; the rest come "
    "from reductions (`tl.sum(axis=...)` results used with another layout), transposes, loads and stores whose "
    "coalesced layouts differ, or dot operands. Inside a loop this costs shared-memory bandwidth and a barrier "
    "every iteration.\n\nFix: keep producers and consumers in one layout (same access pattern for loads and "
    "stores, reduce along the contiguous axis, hoist conversions out of loops).",
    _RLC,
    depends_on=DependsOn.LINE,  # forced by the narrow access on its line
)
DOT_FMA = _rule(
    "TL305",
    "dot-on-fma",
    "tl.dot runs on CUDA cores (FMA) instead of tensor cores",
    Severity.WARNING,
    "AccelerateMatmul rewrites `tt.dot` to an MMA/WGMMA layout only when operand types and tile shapes fit a "
    "tensor-core instruction: fp16/bf16/fp8/int8, or fp32 with `input_precision='tf32'`, and tiles of at least "
    "16 in every dimension. Otherwise the dot is unrolled into scalar FMAs (`fma.rn.f32`/`FFMA`), tens of times "
    "slower than tensor cores.\n\nFix: use tf32 (`input_precision='tf32'`, default) or cast operands to "
    "bf16/fp16, and keep BLOCK_M/N/K >= 16.",
    _ACCEL,
    _TUTORIAL_MM,
    confirms=(Confirms("TL111", "fp32 tl.dot with input_precision='ieee' runs on FMA", _fp32_operands),),
)
DOT_NOT_WGMMA = _rule(
    "TL306",
    "dot-not-wgmma",
    "On Hopper, tl.dot uses mma.sync instead of warp-group MMA (wgmma)",
    Severity.INFO,
    "On sm_90 AccelerateMatmul selects MMA v3 (asynchronous `wgmma` reading operands from shared memory) only "
    "if a warp group (4 warps) can own at least a 64-row tile: BLOCK_M >= 64 and num_warps a multiple of 4, "
    "with supported operand types. Otherwise it falls back to Ampere-style `mma.sync` (v2), which reaches "
    "roughly half of Hopper's tensor-core throughput.\n\nFix: BLOCK_M >= 64 (per warp group) and num_warps=4/8.",
    _ACCEL,
)
NOT_PIPELINED = _rule(
    "TL307",
    "loop-not-pipelined",
    "The loop's global loads are not software-pipelined",
    Severity.WARNING,
    "The pipeliner turns loads in a `tl.dot` loop into asynchronous copies (`cp.async`/TMA) issued "
    "`num_stages - 1` iterations ahead, hiding memory latency behind tensor-core work. It skips loops when "
    "num_stages <= 1, and loads it cannot make asynchronous: `cp.async` needs at least 4 contiguous, aligned "
    "bytes per thread, so unaligned or strided operands stay synchronous `ld.global`.\n\nFix: num_stages=3..4 "
    "for GEMM-like loops, and make the loaded operands contiguous and 16-byte aligned.",
    _PIPE,
    _TUTORIAL_MM,
)
SPILLS = _rule(
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
OCC_REGS = _rule(
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
OCC_SMEM = _rule(
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
SMEM_LIMIT = _rule(
    "TL311",
    "shared-memory-over-limit",
    "Shared memory exceeds what one block can use on this GPU",
    Severity.ERROR,
    "A block can opt in to at most 227 KB of shared memory on sm_90/sm_100, 163 KB on sm_80 and 99 KB on "
    "sm_86/sm_89. Triton raises OutOfResources at launch when the compiled kernel needs more.\n\nFix: reduce "
    "num_stages, BLOCK_K or the tile sizes.",
    _SPECS,
)
INT64 = _rule(
    "TL312",
    "int64-index-arithmetic",
    "Index arithmetic is done in 64-bit integers",
    Severity.INFO,
    "Offsets that become int64 (an int64 argument, `.to(tl.int64)`, or an int64 loaded index) make every "
    "per-element add/multiply a 64-bit operation, which the GPU emulates with two 32-bit instructions, and "
    "64-bit offsets weaken AxisInfo's divisibility reasoning.\n\nFix: keep per-element offsets int32 and "
    "promote only the scalar base (`ptr += pid.to(tl.int64) * stride` once), unless tensors exceed 2^31 "
    "elements.",
    _AXIS,
)
PRECISE_MATH = _rule(
    "TL313",
    "precise-math-path",
    "IEEE-precise division/square root where a fast path exists",
    Severity.INFO,
    "`tl.math.div_rn` and `tl.math.sqrt_rn` (and `fdiv(ieee_rounding=True)`) lower to `div.rn.f32` / "
    "`sqrt.rn.f32`, multi-instruction sequences with a slow path, while `/` and `tl.sqrt` use the approximate "
    "`div.full.f32`/`sqrt.approx.f32` (MUFU) with ~2 ulp error. In softmax/normalization that precision is "
    "rarely needed.\n\nFix: `a / b`, `tl.sqrt`, `tl.rsqrt` unless the result must be bit-exact.",
    _PTX_ISA,
)
REDUNDANT_LOAD = _rule(
    "TL314",
    "redundant-global-load",
    "The same global memory is loaded more than once",
    Severity.WARNING,
    "Two `tt.load`s with the same address and mask and no store between them read the same bytes twice; "
    "Triton does not merge them, so the kernel moves the data from L2/DRAM twice.\n\nFix: load once into a "
    "variable and reuse it.",
    _GUIDE_MEM,
    confirms=(
        Confirms("TL106", "a load whose address and mask do not change in the loop", _same_loop, portable=True),
    ),
)
