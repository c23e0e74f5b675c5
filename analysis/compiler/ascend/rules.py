"""Ascend compiler-grounded rules (TL4xx): what triton-ascend's lowering decided and why it is slow."""

from __future__ import annotations

from typing import Any

from ...core.findings import Finding, Level, Severity
from ...core.rules import Confirms, Rule, register

_DOCS = "https://github.com/triton-lang/triton-ascend/blob/main/docs/en"
PROGRAMMING_GUIDE = f"{_DOCS}/programming_guide.md"
PERFORMANCE_GUIDE = f"{_DOCS}/migration_guide/performance_guidelines.md"
ARCHITECTURE = f"{_DOCS}/migration_guide/architecture_difference.md"
UB_OVERFLOW = f"{_DOCS}/debug_guide/ub_overflow.md"


# --- when a TL4xx finding confirms a triage finding (analysis/core/escalation.py) -----------------------------


def _index_from_load(high: Finding, low: Finding) -> bool:
    # TL401 also fires for addresses that are not affine (modulo, pointer increments); TL116 is the gather.
    return high.data.get("index_line") is not None


def _listed(f: Finding, key: str) -> list[Any]:
    value = f.data.get(key)
    return value if isinstance(value, list) else []


def _int64_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _listed(high, "ops") and "i64" in _listed(high, "dtypes")


def _int64_ops(high: Finding, low: Finding) -> bool:
    return "i64" in _listed(high, "dtypes")


def _int_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _listed(high, "ops")


def _over_cores(high: Finding, low: Finding) -> bool:
    blocks, cores = high.data.get("blocks"), high.data.get("cores")
    return isinstance(blocks, int) and isinstance(cores, int) and blocks > cores


def _over_launch_limit(high: Finding, low: Finding) -> bool:
    blocks = high.data.get("blocks")
    return isinstance(blocks, int) and blocks > 65535


DISCRETE_ACCESS = register(
    Rule(
        code="TL401",
        name="discrete-access-scalarized",
        title="A gather/scatter was lowered to a scalar loop (one global-memory access per element)",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "The address of this `tl.load`/`tl.store` depends on loaded data (or is otherwise not an affine "
            "function of `tl.arange`), so triton-ascend's `--triton-to-unstructure` pass cannot describe it as "
            "one strided block copy. It emits an `scf.for` tagged `ExtractedLoadOrStore` that reads one element "
            "per iteration (`memref.load` / `tensor.extract {DiscreteMemAccess}`): the data mover (MTE2) issues a "
            "tiny transfer per element and the vector unit sits idle. When the source row fits in the Unified "
            "Buffer, load it contiguously once and pick elements on chip with `tl.gather`; otherwise sort or "
            "bucket the indices so that each program reads a contiguous range."
        ),
        references=(
            PROGRAMMING_GUIDE,
            "https://github.com/triton-lang/triton-ascend/issues/339",
            "https://github.com/triton-lang/triton-ascend/pull/1027",
        ),
        confirms=(
            Confirms("TL116", "a gather through loaded indices becomes a scalar loop", _index_from_load),
        ),
    )
)

INT_VECTOR_DEGRADED = register(
    Rule(
        code="TL402",
        name="integer-vector-op-scalarized",
        title="int64 arithmetic or int32/int64 compares on tiles run on the scalar unit",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "The A2/A3 vector unit has no int64 add/multiply lanes and no int32/int64 compare; bishengir expands "
            "such tile ops into element-by-element scalar code. The ttadapter IR shows the op on a "
            "`tensor<...xi64>` (or a `arith.cmpi` on `tensor<...xi32>`). Compute indices in int32 when they fit "
            "(`x.to(tl.int32)`), and compare in fp32 (`cols.to(tl.float32) < N`) when values are exactly "
            "representable (|v| < 2**24)."
        ),
        references=(PERFORMANCE_GUIDE,),
        lowers_to=Severity.INFO,
        lowering="when bishengir ran and kept a vector op on the line (not confirmed)",
        confirms=(
            Confirms("TL117", "an int64 tile comparison runs on the scalar unit", _int64_compare),
            Confirms("TL113", "int64 index tiles run on the scalar unit", _int64_ops),
            Confirms("TL118", "an integer tile comparison in tl.where runs on the scalar unit", _int_compare),
        ),
    )
)

UB_OVERFLOW_RULE = register(
    Rule(
        code="TL403",
        name="ub-capacity-exceeded",
        title="Live tiles exceed the Unified Buffer",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "Every loaded tile and every tile temporary lives in the vector core's Unified Buffer (192 KB on "
            "Atlas A2/A3). With multibuffer on (the default), tiles loaded inside a loop are double-buffered, "
            "halving the usable space. Above capacity bishengir fails with a UB overflow, or the tiling falls "
            "back to a slower schedule. The size comes from bishengir (`UB size = N bits`) when CANN is present, "
            "else from the ttadapter buffers: an estimate (padding and compiler temporaries not counted). "
            "Process the block in sub-tiles with an inner `for` loop (BLOCK_SUB), lower BLOCK, or use a smaller "
            "dtype."
        ),
        references=(PROGRAMMING_GUIDE, UB_OVERFLOW, ARCHITECTURE),
        escalates_to=Severity.ERROR,
        escalation="when bishengir measured the UB size (not an estimate)",
    )
)

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

TAIL_UNALIGNED = register(
    Rule(
        code="TL405",
        name="tail-axis-unaligned",
        title="The tile's last axis is not a multiple of 32 bytes (vector) / 512 bytes (cube)",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "The Unified Buffer is addressed in 32-byte blocks and the cube unit's fractal tiles are 512 bytes. "
            "A tile whose last axis is shorter (say a (2048, 3) fp16 tile: 6 bytes per row) is padded row by row "
            "on every move, multiplying UB use and data-mover work. Choose block sizes whose last axis is a "
            "multiple of 32 bytes (512 bytes for `tl.dot` operands), or load the data as a flat 1-D block and "
            "reshape/transpose on chip so the long axis is last."
        ),
        references=(PROGRAMMING_GUIDE,),
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

MASKED_LOAD_PADDING = register(
    Rule(
        code="TL407",
        name="masked-load-padding-serializes",
        title="A masked load zero-fills the whole tile on the vector unit before copying",
        level=Level.COMPILER,
        severity=Severity.HINT,
        platforms=("ascend",),
        rationale=(
            "Triton leaves masked-off lanes undefined when `other` is not given; triton-ascend fills them with "
            "zeros anyway (to behave like GPUs): a vector `linalg.fill` of the entire on-chip buffer, and only "
            "then the MTE2 copy of the valid part, so the copy waits on the vector pipe and loads cannot overlap "
            "compute. Reported only when the kernel provably never observes those lanes (the value flows through "
            "elementwise math into stores with the same mask); then `care_padding=False` on the `tl.load` drops "
            "the fill and the quick fix adds it."
        ),
        references=(PERFORMANCE_GUIDE,),
        has_fix=True,
    )
)

ALL = (
    DISCRETE_ACCESS,
    INT_VECTOR_DEGRADED,
    UB_OVERFLOW_RULE,
    GRID_VS_CORES,
    TAIL_UNALIGNED,
    STATIC_RANGE_UNROLLED,
    MASKED_LOAD_PADDING,
)
