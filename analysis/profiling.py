"""Level 2: diagnose measured launches against the device's roofline. Pure: a runner's result dict in, findings out.

Per distinct launch: median time; bytes moved (the footprint of its tensor arguments: each viewed once, read if
unchanged by the launch, written if changed; a lower bound when a kernel re-reads); FLOPs when derivable (a
tl.dot whose operand shapes are among the arguments: 2*M*N*K); achieved GB/s and TFLOP/s against the device's
ceilings (measured when the runner measured them); roofline class; waves and tail of the grid over the SMs /
AI cores; occupancy from registers and shared memory. Nsight Compute's per-line view, when present, adds
line-level findings. A launch "near the roofline" gets TL201, which tells callers to stop escalating.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from . import profiling_rules as R
from .devices import DeviceSpec
from .findings import Evidence, Finding, Span
from .persistent import persistent_kernels
from .profiling_flops import ncu_fp32_flops
from .profiling_ncu import NcuSourceView
from .profiling_roofline import _finding, compute_ceiling, ir_flops, roofline_findings
from .source_lines import source_lines as split_source_lines

NEAR_ROOFLINE = 0.70  # fraction of the ceiling above which we call a launch done
LOW_FRACTION = 0.50  # below this a memory- or compute-bound launch gets a warning
LATENCY_MS = 0.010  # launches shorter than this are dominated by launch overhead
MIN_MS_FOR_GRID_FINDINGS = 0.020  # grid shape matters only when the kernel runs long enough to see it
EXCESSIVE_SECTORS = 0.25  # ncu: share of excess L2 sectors on a line worth a finding
HOTSPOT_SHARE = 0.40  # ncu: share of stall samples on one line worth a hint


@dataclass
class LaunchAnalysis:
    index: int
    kernel: str
    file: str
    line: int
    grid: list[int]
    programs: int
    count: int
    time_ms: float | None
    bytes_read: int
    bytes_written: int
    bytes_known_direction: bool  # False: no snapshot told reads from writes, all counted once
    flops: float | None
    achieved_gbps: float | None = None
    achieved_tflops: float | None = None
    bandwidth_fraction: float | None = None
    compute_fraction: float | None = None
    intensity: float | None = None  # FLOP per byte
    ridge: float | None = None  # FLOP per byte where the roofline bends
    bound: str = "unknown"  # "memory" | "compute" | "latency" | "unknown"
    floor_ms: float | None = None  # the roofline's time for this launch
    waves: float | None = None
    programs_per_sm: int | None = None
    occupancy: float | None = None  # resident warps / max warps per SM
    occupancy_limiter: str | None = None  # "registers" | "shared memory" | "threads" | "blocks"
    near_roofline: bool = False
    persistent: bool = False  # the kernel loops over tiles with a program-count stride (analysis.persistent)
    notes: list[str] = field(default_factory=list)
    flop_source: str | None = None  # "ir" (counted from the compiled TTIR) | "arguments" (a matmul-shaped triple)
    tensor_cores: bool | None = None  # the FLOPs run on matrix units (a dot) or not; None when unknown
    matmul_without_dot: bool = False  # multiply-accumulate loops over 2-D tiles and no dot (IR)
    flop_ceiling: str | None = None  # the compute ceiling used, with its source

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written


@dataclass
class ProfileReport:
    device: DeviceSpec | None
    launches: list[LaunchAnalysis]
    findings: list[Finding]
    timing_meaningful: bool
    notes: list[str] = field(default_factory=list)

    @property
    def stop_escalation(self) -> bool:
        """Every timed launch already runs near its roofline: a rewrite cannot pay off."""
        timed = [la for la in self.launches if la.time_ms]
        return bool(timed) and all(la.near_roofline for la in timed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device.to_dict() if self.device else None,
            "timing_meaningful": self.timing_meaningful,
            "stop_escalation": self.stop_escalation,
            "launches": [{**asdict(la), "bytes_moved": la.bytes_moved} for la in self.launches],
            "findings": [f.to_dict() for f in self.findings],
            "notes": list(self.notes),
        }


# ---- numbers per launch -------------------------------------------------------------------------------------


def footprint(args: list[dict[str, Any]]) -> tuple[int, int, bool]:
    """(bytes read, bytes written, direction known) from recorded tensor arguments."""
    read = written = 0
    known = False
    for arg in args:
        if arg.get("kind") != "tensor" or not arg.get("nbytes"):
            continue
        if arg.get("written") is None:
            read += int(arg["nbytes"])
        else:
            known = True
            if arg["written"]:
                written += int(arg["nbytes"])
            else:
                read += int(arg["nbytes"])
    return read, written, known


def dot_flops(args: list[dict[str, Any]]) -> tuple[float, str] | None:
    """2*M*N*K for a matmul-shaped triple among the tensor arguments: A [..,M,K], B [..,K,N], C [..,M,N]."""
    mats = [a for a in args if a.get("kind") == "tensor" and len(a.get("shape") or ()) >= 2]
    for a in mats:
        for b in mats:
            if a is b:
                continue
            m, k = a["shape"][-2:]
            k2, n = b["shape"][-2:]
            if k != k2:
                continue
            for c in mats:
                if c is a or c is b or list(c["shape"][-2:]) != [m, n]:
                    continue
                batch = math.prod(c["shape"][:-2]) if len(c["shape"]) > 2 else 1
                return 2.0 * m * n * k * batch, str(a.get("dtype"))
    return None


def occupancy(resources: dict[str, Any], device: DeviceSpec) -> tuple[int | None, float | None, str | None]:
    """(programs resident per SM, resident warps / max warps, the limiting resource) as CUDA's occupancy
    calculator reasons: threads, registers (allocated per warp in units of 256), shared memory, block slots."""
    warps = resources.get("num_warps")
    if not warps or not device.max_threads_per_sm:
        return None, None, None
    threads = warps * device.warp_size
    limits: dict[str, int] = {"threads": device.max_threads_per_sm // threads}
    if device.max_blocks_per_sm:
        limits["blocks"] = device.max_blocks_per_sm
    regs = resources.get("n_regs")
    if regs and device.regs_per_sm:
        per_warp = math.ceil(regs * device.warp_size / 256) * 256
        limits["registers"] = (device.regs_per_sm // per_warp) // warps
    shared = resources.get("shared")
    if shared and device.smem_per_sm:
        limits["shared memory"] = device.smem_per_sm // (shared + device.smem_reserved_per_block)
    limiter = min(limits, key=lambda k: limits[k])
    blocks = limits[limiter]
    max_warps = device.max_threads_per_sm // device.warp_size
    return blocks, min(1.0, blocks * warps / max_warps), limiter


def analyze_launch(rec: dict[str, Any], device: DeviceSpec | None, timing_meaningful: bool) -> LaunchAnalysis:
    grid = [int(g) for g in rec.get("grid") or [1]]
    read, written, known = footprint(rec.get("args") or [])
    time = (rec.get("time_ms") or {}).get("median") if timing_meaningful else None
    counted = ir_flops(rec)
    flops_dtype = dot_flops(rec.get("args") or []) if rec.get("uses_dot") and counted is None else None
    la = LaunchAnalysis(
        index=int(rec.get("index", 0)),
        kernel=str(rec.get("kernel", "?")),
        file=str(rec.get("file", "")),
        line=int(rec.get("line") or 1),
        grid=grid,
        programs=math.prod(grid),
        count=int(rec.get("count", 1)),
        time_ms=float(time) if time else None,
        bytes_read=read,
        bytes_written=written,
        bytes_known_direction=known,
        flops=flops_dtype[0] if flops_dtype else None,
    )
    if counted is not None:
        la.flops = counted.total * la.programs or None
        la.flop_source = "ir"
        la.tensor_cores = counted.dot > 0
        la.matmul_without_dot = counted.matmul_without_dot
        if not counted.exact:
            la.notes.append(f"FLOPs are a lower bound: loop trip counts unknown ({'; '.join(counted.unknown_loops[:2])})")
    elif flops_dtype:
        la.flop_source, la.tensor_cores = "arguments", True
    elif rec.get("ncu_fp32_flops"):
        la.flops, la.flop_source, la.tensor_cores = float(rec["ncu_fp32_flops"]), "ncu", False
    if counted is not None and rec.get("ncu_fp32_flops"):
        la.notes.append(
            f"Nsight Compute counted {rec['ncu_fp32_flops']:,.0f} FP32 FLOPs (FMA x2 + other FP32, 32 lanes per "
            f"warp instruction); the IR count is {la.flops or 0:,.0f}"
        )
    if rec.get("uses_dot") and not flops_dtype and counted is None:
        la.notes.append("tl.dot kernel, but no matmul-shaped tensor arguments: FLOPs not derived")
    if device is None:
        return la
    resources = rec.get("resources") or {}
    la.programs_per_sm, la.occupancy, la.occupancy_limiter = occupancy(resources, device)
    if device.compute_units:
        per_wave = device.compute_units * (la.programs_per_sm or 1)
        la.waves = la.programs / per_wave
    bw = device.memory_bandwidth.value * 1e9  # bytes/s
    rate = device.rate(flops_dtype[1]) if flops_dtype else None
    if counted is not None:
        rate = compute_ceiling(device, counted)
    elif la.flop_source == "ncu":
        rate = device.rates.get("fp32")
    la.flop_ceiling = rate.label() if rate else None
    mem_floor = la.bytes_moved / bw * 1e3 if la.bytes_moved else 0.0
    flop_floor = la.flops / (rate.value * 1e12) * 1e3 if la.flops and rate else 0.0
    la.floor_ms = max(mem_floor, flop_floor) or None
    if la.flops and la.bytes_moved and rate:
        la.intensity = la.flops / la.bytes_moved
        la.ridge = rate.value * 1e12 / bw
    if la.time_ms is None:
        return la
    seconds = la.time_ms * 1e-3
    la.achieved_gbps = la.bytes_moved / seconds / 1e9
    la.bandwidth_fraction = la.bytes_moved / seconds / bw
    if la.flops and rate:
        la.achieved_tflops = la.flops / seconds / 1e12
        la.compute_fraction = la.flops / seconds / (rate.value * 1e12)
    if la.time_ms < LATENCY_MS:
        la.bound = "latency"
    elif la.intensity is not None and la.ridge is not None and la.intensity >= la.ridge:
        la.bound = "compute"
    else:
        la.bound = "memory"  # elementwise, reductions, copies: a few FLOPs per byte at most
        if la.flops is None and not rec.get("uses_dot") and counted is None:
            la.notes.append("memory-bound assumed: no tl.dot, so at most a few FLOPs per byte")
    fraction = la.compute_fraction if la.bound == "compute" else la.bandwidth_fraction
    # Near the FMA ceiling is not done when the work is a matrix product: tensor cores raise the ceiling.
    la.near_roofline = (
        la.bound != "latency" and fraction is not None and fraction >= NEAR_ROOFLINE and not la.matmul_without_dot
    )
    return la


# ---- findings -------------------------------------------------------------------------------------------------


def _def_line(line: int, source_lines: list[str] | None) -> int:
    """Runners before the def-line fix recorded the decorator's line: move to the `def` it decorates."""
    if not source_lines:
        return line
    n = line
    while 0 < n <= len(source_lines) and source_lines[n - 1].lstrip().startswith("@"):
        n += 1
    if 0 < n <= len(source_lines) and source_lines[n - 1].lstrip().startswith(("def ", "async def ")):
        return n
    return line


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


def analyze_run(
    result: dict[str, Any],
    device: DeviceSpec | None,
    *,
    source: str | None = None,
    path: str | None = None,
    ncu: NcuSourceView | None = None,
) -> ProfileReport:
    """Analyze a runner's run/profile result (RunResult as a dict). `device`: from analysis.devices.from_runner.

    `source`/`path`: the user's text and file name, for spans and to select ncu lines of that file."""
    meaningful = bool(result.get("timing_meaningful", True))
    records = [dict(rec) for rec in result.get("launches") or []]
    ncu_raw = result.get("ncu") or {}
    if isinstance(ncu_raw.get("details"), str):  # Nsight Compute's FP32 instruction counts for its launch
        counted = ncu_fp32_flops(ncu_raw["details"])
        for rec in records:
            if counted and rec.get("index", 0) == ncu_raw.get("launch", 0):
                rec["ncu_fp32_flops"] = counted
    launches = [analyze_launch(rec, device, meaningful) for rec in records]
    source_lines = split_source_lines(source) if source is not None else None
    persistent = persistent_kernels(source) if source is not None else set()
    for la in launches:
        la.line = _def_line(la.line, source_lines)
        if la.kernel in persistent:
            la.persistent = True
            la.notes.append(
                "persistent kernel (loops over tiles with a program-count stride): few programs per SM and a "
                "single wave are by design, so no occupancy or wave-tail verdict"
            )
    findings: list[Finding] = []
    notes: list[str] = []
    if not meaningful:
        notes.append(f"backend {result.get('backend')!r}: timings are meaningless, no roofline verdicts")
    elif device is None:
        notes.append(
            f"unknown device {result.get('device', {}).get('name')!r}: no ceilings to compare against"
        )
    if device is not None and meaningful:
        for la in launches:
            findings.extend(launch_findings(la, device, source_lines))
    if ncu is not None and device is not None:
        target = (result.get("ncu") or {}).get("launch")
        for la in launches:
            if target is not None and la.index != target:
                continue
            if la.near_roofline:  # stalls on memory are expected there: line hints would only be noise
                notes.append(
                    f"{la.kernel} is near its roofline: Nsight Compute lines not turned into findings"
                )
            else:
                findings.extend(ncu_findings(ncu, la, path, source_lines))
            break
    return ProfileReport(
        device=device, launches=launches, findings=findings, timing_meaningful=meaningful, notes=notes
    )
