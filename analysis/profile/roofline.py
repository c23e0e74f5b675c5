"""The FLOP side of the roofline: FLOPs of a launch from its compiled IR, the compute ceiling they run against
(tensor cores for a dot, the FMA units otherwise), and the findings that need both: compute-bound matrix work
without tensor cores (TL210) and grids of many tiny programs (TL211). Pure: launch records and specs in."""

from __future__ import annotations

from typing import Any

from ..core.devices import Ceiling, DeviceSpec
from ..core.findings import Evidence, Finding, Level, Severity, Span
from ..core.rules import Rule, register
from .declare import _BOTH, _ROOFLINE
from .flops import FlopCount, count_flops

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



# analysis/profile/launch.py's LaunchAnalysis (not imported: profiling_launch imports this module)
LaunchAnalysis = Any

# Programs each SM / AI core runs one after another above which per-program overhead (launching a CTA, its index
# math, filling and draining its memory pipeline) is worth a look, when each also moves little data.
MANY_PROGRAMS_PER_UNIT = 256
TINY_PROGRAM_BYTES = 16 * 1024  # bytes one program moves, below which it does "little work"
# TTIR element types of dot operands -> the dtype names DeviceSpec.rate understands
_IR_DTYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f8E4M3FN": "float8_e4m3fn",
    "f8E5M2": "float8_e5m2",
}


def ir_flops(rec: dict[str, Any]) -> FlopCount | None:
    """FLOPs per program from the launch's recorded TTIR, with its scalar arguments as loop bounds."""
    ttir = rec.get("ttir")
    if not isinstance(ttir, str) or not ttir:
        return None
    scalars = {
        str(a["name"]): a["value"]
        for a in rec.get("args") or []
        if a.get("kind") in ("int", "float") and a.get("name") is not None
    }
    count = count_flops(ttir, scalars)
    return count if count.total > 0 else None


def compute_ceiling(device: DeviceSpec, count: FlopCount) -> Ceiling | None:
    """Matrix-unit rate for the dot's operand type when the kernel has a dot, else the fp32 FMA rate."""
    if count.dot > 0:
        return device.rate(_IR_DTYPES.get(count.dot_dtype or "", count.dot_dtype or "bfloat16"))
    return device.rates.get("fp32")


def roofline_findings(
    la: LaunchAnalysis, device: DeviceSpec, span: Span, platforms: tuple[str, ...], ev: list[Evidence]
) -> list[Finding]:
    out: list[Finding] = []
    if la.time_ms is None:
        return out
    no_tc = _without_tensor_cores(la, device, span, platforms, ev)
    if no_tc is not None:
        out.append(no_tc)
    tiny = _many_tiny_programs(la, device, span, platforms, ev)
    if tiny is not None:
        out.append(tiny)
    return out


def _without_tensor_cores(
    la: LaunchAnalysis, device: DeviceSpec, span: Span, platforms: tuple[str, ...], ev: list[Evidence]
) -> Finding | None:
    if not (la.matmul_without_dot and la.bound == "compute" and la.flops and la.time_ms):
        return None
    matrix = device.rate("bfloat16")
    if matrix is None:
        return None
    seconds = la.time_ms * 1e-3
    tc_floor_ms = la.flops / (matrix.value * 1e12) * 1e3
    frac = f", {la.compute_fraction:.0%} of the FMA ceiling {la.flop_ceiling}" if la.compute_fraction else ""
    message = (
        f"{la.kernel} is compute-bound without tensor cores: {la.flops / 1e9:,.1f} GFLOP of multiply-adds on the "
        f"FMA units at {la.flops / seconds / 1e12:,.2f} TFLOP/s{frac}; "
        f"{la.intensity:,.0f} FLOP/byte is above the ridge point ({la.ridge:,.0f})"
    )
    gain = (
        f"up to {la.time_ms / tc_floor_ms:,.0f}x with tl.dot (tensor-core floor {tc_floor_ms * 1e3:,.0f} us at "
        f"{matrix.label()})"
    )
    evidence = Evidence(
        kind="profile",
        stage="roofline",
        summary=(
            f"FLOPs counted from the compiled TTIR: {la.flops:,.0f} over {la.programs} programs, no tt.dot; "
            f"compute ceiling used: {la.flop_ceiling}; matrix ceiling: {matrix.label()}"
        ),
    )
    return _finding(
        NO_TENSOR_CORES, message, la, span, platforms, [*ev, evidence], gain,
        flops=la.flops, intensity=la.intensity, ridge=la.ridge, tensor_core_floor_ms=tc_floor_ms,
    )  # fmt: skip


def _many_tiny_programs(
    la: LaunchAnalysis, device: DeviceSpec, span: Span, platforms: tuple[str, ...], ev: list[Evidence]
) -> Finding | None:
    if la.waves is None or la.near_roofline or not la.programs or not device.compute_units:
        return None
    per_unit = la.programs / device.compute_units
    per_program = la.bytes_moved / la.programs
    if per_unit < MANY_PROGRAMS_PER_UNIT:
        return None
    if per_program > TINY_PROGRAM_BYTES:
        return None
    flops = f", {la.flops / la.programs:,.0f} FLOP" if la.flops else ""
    us_per_wave = la.time_ms * 1e3 / la.waves if la.time_ms else None
    units = "SMs" if device.vendor == "nvidia" else "AI cores"
    message = (
        f"{la.programs:,} programs, {per_unit:,.0f} per {units[:-1]} ({la.waves:,.0f} waves of "
        f"{(la.programs_per_sm or 1) * device.compute_units:,} resident programs), each moving "
        f"{per_program:,.0f} bytes{flops}"
        + (f" ({us_per_wave:.2f} us per wave)" if us_per_wave else "")
        + ": per-program overhead dominates; give each program more work (larger BLOCK, several rows, "
        "or a persistent grid)"
    )
    return _finding(
        MANY_TINY_PROGRAMS, message, la, span, platforms, ev, "not estimated (depends on the new shape)",
        waves=la.waves, bytes_per_program=per_program, programs=la.programs, programs_per_unit=per_unit,
    )  # fmt: skip


def _finding(  # shared with analysis/profile/analyze.py
    rule: Rule,
    message: str,
    la: LaunchAnalysis,
    span: Span,
    platforms: tuple[str, ...],
    evidence: list[Evidence],
    gain: str | None = None,
    **data: Any,
) -> Finding:
    return rule.finding(
        message,
        span,
        kernel=la.kernel,
        platforms=platforms,
        evidence=evidence,
        gain=gain,
        data={"launch": la.index, **data},
    )
