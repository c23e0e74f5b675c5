"""Level 2 numbers per measured launch: bytes moved (the footprint of its tensor arguments), FLOPs of a `tl.dot`
whose shapes are among the arguments, occupancy from registers and shared memory, achieved throughput against the
device's ceilings, roofline class and grid waves (`LaunchAnalysis`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..compiler.cuda.limits import SmLimits
from ..compiler.cuda.limits import occupancy as sm_occupancy
from ..core.devices import DeviceSpec
from .roofline import compute_ceiling, ir_flops

NEAR_ROOFLINE = 0.70  # fraction of the ceiling above which we call a launch done
LATENCY_MS = 0.010  # launches shorter than this are dominated by launch overhead


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
    occupancy_limiter: str | None = None  # "registers" | "shared memory" | "warps" | "blocks"
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
    """(programs resident per SM, resident warps / max warps, the limiting resource) of a launch on `device`,
    from the compiler's resource usage; None when the device or the launch does not say enough."""
    warps = resources.get("num_warps")
    if not warps or not device.max_threads_per_sm:
        return None, None, None
    unknown = 1 << 30  # a limit the device table does not give never binds
    limits = SmLimits(
        device.name,
        registers_per_sm=device.regs_per_sm or unknown,
        max_registers_per_thread=255,
        max_warps_per_sm=device.max_threads_per_sm // device.warp_size,
        max_blocks_per_sm=device.max_blocks_per_sm or unknown,
        shared_per_sm=device.smem_per_sm or unknown,
        shared_per_block=device.smem_per_sm or unknown,
        reserved_shared_per_block=device.smem_reserved_per_block or 0,
    )
    occ = sm_occupancy(limits, int(warps), int(resources.get("n_regs") or 0), int(resources.get("shared") or 0))
    return occ.blocks_per_sm, min(1.0, occ.fraction), occ.limiter


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
