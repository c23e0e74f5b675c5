"""Level 2 findings (TL2xx) from one launch's numbers, and line-level ones from Nsight Compute's source view."""

from __future__ import annotations

import math

from ..core.devices import DeviceSpec
from ..core.findings import Evidence, Finding, Span
from ..core.rules import register_check
from . import rules as R
from .launch import LaunchAnalysis
from .ncu import NcuSourceView
from .roofline import _finding, roofline_findings

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
    LAUNCH_FAMILY, R.NEAR_ROOFLINE, R.LOW_BANDWIDTH, R.LOW_COMPUTE, R.NO_TENSOR_CORES, R.MANY_TINY_PROGRAMS,
    R.TINY_LAUNCHES, R.SMALL_GRID, R.WAVE_TAIL, R.LOW_OCCUPANCY,
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
                R.NEAR_ROOFLINE,
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
                R.LOW_BANDWIDTH,
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
                R.LOW_COMPUTE,
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
                R.TINY_LAUNCHES,
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
                R.SMALL_GRID,
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
                    R.WAVE_TAIL,
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
                R.LOW_OCCUPANCY,
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


@register_check(NCU_FAMILY, R.UNCOALESCED, R.STALL_HOTSPOT)
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
                    R.UNCOALESCED,
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
                    R.STALL_HOTSPOT,
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
