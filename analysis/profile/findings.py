"""Level 2 findings (TL2xx) from one launch's numbers, and line-level ones from Nsight Compute's source view."""

from __future__ import annotations

import math

from ..core.devices import DeviceSpec
from ..core.findings import Evidence, Finding, Level, Severity, Span
from ..core.rules import Confirms, Rule, register, register_check
from .declare import _BOTH, _NV, _ROOFLINE
from .launch import LaunchAnalysis
from .ncu import NcuSourceView
from .roofline import MANY_TINY_PROGRAMS, NO_TENSOR_CORES, _finding, roofline_findings

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



# Check families run by analysis/profile/analyze.py: `check(la, device, source_lines)` per timed launch, and
# `check(view, la, path, source_lines)` over Nsight Compute's source view of the profiled launch. A new TL2xx
# rule registers its check in its own module the same way.
LAUNCH_FAMILY = "profile-launch"
NCU_FAMILY = "profile-ncu"

LOW_FRACTION = 0.50  # below this a memory- or compute-bound launch gets a warning
MIN_MS_FOR_GRID_FINDINGS = 0.020  # grid shape matters only when the kernel runs long enough to see it
EXCESSIVE_SECTORS = 0.25  # ncu: share of excess L2 sectors on a line worth a finding
HOTSPOT_SHARE = 0.40  # ncu: share of stall samples on one line worth a hint


def _span(line: int, source_lines: list[str] | None) -> Span:
    text = source_lines[line - 1] if source_lines and 0 < line <= len(source_lines) else ""
    start = len(text) - len(text.lstrip())
    return Span(line, start, line, len(text.rstrip()))


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _profile_evidence(la: LaunchAnalysis, device: DeviceSpec) -> Evidence:
    direction = (
        f"{_fmt_bytes(la.bytes_read)} read + {_fmt_bytes(la.bytes_written)} written"
        if la.bytes_known_direction
        else f"{_fmt_bytes(la.bytes_moved)} of tensor arguments (directions unknown: no snapshot)"
    )
    parts = [
        f"median {la.time_ms * 1e3:.1f} us" if la.time_ms else "not timed",
        direction,
        f"{la.achieved_gbps:,.0f} GB/s of {device.memory_bandwidth.label()}" if la.achieved_gbps else "",
    ]
    if la.achieved_tflops is not None and la.flops:
        parts.append(f"{la.achieved_tflops:,.1f} TFLOP/s ({la.flops / 1e9:,.1f} GFLOP)")
    if la.waves is not None:
        parts.append(f"grid {la.programs} programs = {la.waves:.2f} waves on {device.compute_units} units")
    return Evidence(kind="profile", summary="; ".join(p for p in parts if p), stage="timing")


@register_check(
    LAUNCH_FAMILY, NEAR_ROOFLINE, LOW_BANDWIDTH, LOW_COMPUTE, NO_TENSOR_CORES, MANY_TINY_PROGRAMS,
    TINY_LAUNCHES, SMALL_GRID, WAVE_TAIL, LOW_OCCUPANCY,
)  # fmt: skip
def launch_findings(la: LaunchAnalysis, device: DeviceSpec, source_lines: list[str] | None) -> list[Finding]:
    platforms = ("cuda",) if device.vendor == "nvidia" else ("ascend",)
    span = _span(la.line, source_lines)
    ev = [_profile_evidence(la, device)]
    out: list[Finding] = []
    if la.time_ms is None:
        return out
    units = "SMs" if device.vendor == "nvidia" else "AI cores"
    if la.near_roofline:
        frac = la.compute_fraction if la.bound == "compute" else la.bandwidth_fraction
        what = "compute" if la.bound == "compute" else "bandwidth"
        out.append(
            _finding(
                NEAR_ROOFLINE,
                f"{la.kernel} runs at {frac:.0%} of the {what} ceiling: already near the roofline, "
                "rewriting it cannot gain much (consider fusing it with neighbouring kernels instead)",
                la,
                span,
                platforms,
                ev,
                f"at most {1 / frac:.2f}x" if frac and frac < 1 else "none",
                stop_escalation=True,
                fraction=frac,
            )
        )
    elif la.bound == "memory" and la.bandwidth_fraction is not None and la.bandwidth_fraction < LOW_FRACTION:
        out.append(
            _finding(
                LOW_BANDWIDTH,
                f"{la.kernel} is memory-bound but moves only {la.achieved_gbps:,.0f} GB/s, "
                f"{la.bandwidth_fraction:.0%} of the {device.memory_bandwidth.value:,.0f} GB/s ceiling",
                la,
                span,
                platforms,
                ev,
                f"up to {1 / max(la.bandwidth_fraction, 1e-9):.1f}x (time at the bandwidth floor: "
                f"{(la.floor_ms or 0) * 1e3:.0f} us)",
                fraction=la.bandwidth_fraction,
            )
        )
    elif (
        la.bound == "compute"
        and not la.matmul_without_dot  # TL210 says it against the right ceiling
        and la.compute_fraction is not None
        and la.compute_fraction < LOW_FRACTION
    ):
        out.append(
            _finding(
                LOW_COMPUTE,
                f"{la.kernel} is compute-bound but reaches {la.achieved_tflops:,.1f} TFLOP/s, "
                f"{la.compute_fraction:.0%} of the "
                + ("matrix-unit" if la.tensor_cores is not False else "FMA")
                + f" ceiling ({la.flop_ceiling})",
                la,
                span,
                platforms,
                ev,
                f"up to {1 / max(la.compute_fraction, 1e-9):.1f}x",
                fraction=la.compute_fraction,
            )
        )
    out.extend(roofline_findings(la, device, span, platforms, ev))
    if la.bound == "latency" and la.count >= 10:
        out.append(
            _finding(
                TINY_LAUNCHES,
                f"{la.kernel} ran {la.count} times at {la.time_ms * 1e3:.1f} us each: launch overhead dominates",
                la,
                span,
                platforms,
                ev,
                "up to the launch overhead per call (a few us) saved by fusion or a CUDA graph",
            )
        )
    long_enough = la.time_ms >= MIN_MS_FOR_GRID_FINDINGS and not la.near_roofline
    if long_enough and device.compute_units and la.programs < device.compute_units:
        out.append(
            _finding(
                SMALL_GRID,
                f"grid of {la.programs} programs for {device.compute_units} {units}: "
                f"{device.compute_units - la.programs} stay idle for the whole launch",
                la,
                span,
                platforms,
                ev,
                f"up to {device.compute_units / la.programs:.1f}x with enough programs",
                programs=la.programs,
            )
        )
    elif long_enough and not la.persistent and la.waves is not None and 1 < la.waves < 4:
        full = math.ceil(la.waves)
        tail = la.waves - math.floor(la.waves)
        if 0 < tail <= 0.5:
            out.append(
                _finding(
                    WAVE_TAIL,
                    f"{la.programs} programs make {la.waves:.2f} waves: the last wave fills {tail:.0%} of the device",
                    la,
                    span,
                    platforms,
                    ev,
                    f"up to {full / la.waves:.2f}x with a whole number of waves",
                    waves=la.waves,
                )
            )
    if (
        long_enough
        and not la.persistent
        and la.bound == "memory"
        and la.occupancy is not None
        and la.occupancy < 0.25
        and la.occupancy_limiter in ("registers", "shared memory")
    ):
        out.append(
            _finding(
                LOW_OCCUPANCY,
                f"only {la.programs_per_sm} program(s) per SM fit ({la.occupancy:.0%} occupancy), "
                f"limited by {la.occupancy_limiter}",
                la,
                span,
                platforms,
                ev,
                occupancy=la.occupancy,
            )
        )
    return out


@register_check(NCU_FAMILY, UNCOALESCED, STALL_HOTSPOT)
def ncu_findings(
    view: NcuSourceView, la: LaunchAnalysis, path: str | None, source_lines: list[str] | None
) -> list[Finding]:
    """Line-level findings from Nsight Compute's source view of one launch."""
    lines = view.for_file(path or la.file)
    out: list[Finding] = []
    total_sectors = view.total_l2_sectors()
    total_samples = view.total_stall_samples()
    for ln in lines:
        if (
            ln.l2_sectors
            and ln.excessive_fraction >= EXCESSIVE_SECTORS
            and ln.l2_sectors >= 0.05 * total_sectors
        ):
            ev = Evidence(
                kind="profile",
                stage="ncu",
                summary=(
                    f"L2 sectors {ln.l2_sectors:,} vs ideal {ln.l2_sectors_ideal:,}: "
                    f"{ln.excessive_fraction:.0%} excessive ({ln.access})"
                ),
                excerpt="\n".join(ln.sass[:6]),
            )
            ratio = ln.l2_sectors / ln.l2_sectors_ideal if ln.l2_sectors_ideal else None
            out.append(
                _finding(
                    UNCOALESCED,
                    f"line {ln.line} touches {ratio:.1f}x the L2 sectors its accesses need: "
                    "neighbouring threads access addresses far apart (uncoalesced)"
                    if ratio
                    else f"line {ln.line} has {ln.l2_sectors_excessive:,} excessive L2 sectors (uncoalesced)",
                    la,
                    _span(ln.line, source_lines),
                    ("cuda",),
                    [ev],
                    f"up to {ratio:.1f}x fewer sectors on this line" if ratio else None,
                    excessive_sectors=ln.l2_sectors_excessive,
                )
            )
    if total_samples:
        hot = max(lines, key=lambda ln: ln.stall_samples, default=None)
        if hot is not None and hot.stall_samples / total_samples >= HOTSPOT_SHARE:
            reasons = sorted(hot.stalls.items(), key=lambda kv: -kv[1])[:3]
            why = ", ".join(f"{name} {count / hot.stall_samples:.0%}" for name, count in reasons)
            out.append(
                _finding(
                    STALL_HOTSPOT,
                    f"line {hot.line} collects {hot.stall_samples / total_samples:.0%} of the warp stall samples "
                    f"({why})",
                    la,
                    _span(hot.line, source_lines),
                    ("cuda",),
                    [
                        Evidence(
                            kind="profile",
                            stage="ncu",
                            summary=f"{hot.stall_samples:,} of {total_samples:,} samples",
                        )
                    ],
                    share=hot.stall_samples / total_samples,
                )
            )
    return out
