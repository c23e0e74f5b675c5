"""Known devices and their ceilings (memory bandwidth, matrix and vector rates, SM / AI-core resources).

Every ceiling says where it comes from: "datasheet" (vendor figure), "announced" (public announcement, no
datasheet), or "measured" (timed by a runner on that device: a device-to-device copy counting bytes read plus
written, a large bf16 matmul). Measured ceilings replace datasheet ones when a runner supplied them; callers
cache them per device name (see server/commands/profile.py). Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..compiler.cuda.limits import SM_LIMITS


@dataclass(frozen=True)
class Ceiling:
    value: float
    unit: str  # "GB/s" | "TFLOP/s"
    source: str  # "datasheet" | "announced" | "measured"
    note: str = ""

    def label(self) -> str:
        return f"{self.value:,.0f} {self.unit} ({self.source}{', ' + self.note if self.note else ''})"


@dataclass(frozen=True)
class DeviceSpec:
    key: str
    name: str
    vendor: str  # "nvidia" | "huawei"
    names: tuple[str, ...]  # lower-case substrings of the name a runtime reports
    compute_units: int | None  # SMs (NVIDIA) or AI cores / cube cores (Ascend)
    memory_bandwidth: Ceiling
    rates: dict[str, Ceiling] = field(default_factory=dict)  # "bf16", "fp16", "tf32", "fp32", "fp8" (dense)
    vector_units: int | None = None  # Ascend vector cores
    regs_per_sm: int | None = None
    smem_per_sm: int | None = None  # bytes
    smem_reserved_per_block: int = 0  # bytes the driver keeps per resident block
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    warp_size: int = 32
    l2_bytes: int | None = None
    notes: str = ""

    def rate(self, dtype: str) -> Ceiling | None:
        """Matrix-unit rate for a dot's operand dtype (fp32 dots run as tf32 by default in Triton)."""
        key = {
            "float16": "fp16",
            "bfloat16": "bf16",
            "float32": "tf32",
            "float8_e4m3fn": "fp8",
            "float8_e5m2": "fp8",
        }
        return self.rates.get(key.get(dtype, dtype)) or self.rates.get("bf16")

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "vendor": self.vendor,
            "compute_units": self.compute_units,
            "memory_bandwidth": self.memory_bandwidth.label(),
            "rates": {k: v.label() for k, v in self.rates.items()},
        }


def _tf(value: float, source: str = "datasheet", note: str = "") -> Ceiling:
    return Ceiling(value, "TFLOP/s", source, note)


_HOPPER_RATES = {  # SXM, dense (no sparsity), NVIDIA H100/H200 datasheets
    "fp8": _tf(1979),
    "bf16": _tf(989),
    "fp16": _tf(989),
    "tf32": _tf(495),
    "fp32": _tf(67),
}
_HOPPER = SM_LIMITS[90]  # one table of per-SM limits: the compiler's resource checks read the same numbers
_HOPPER_SM = {
    "regs_per_sm": _HOPPER.registers_per_sm,
    "smem_per_sm": _HOPPER.shared_per_sm,  # 228 KiB per SM
    "smem_reserved_per_block": _HOPPER.reserved_shared_per_block,
    "max_threads_per_sm": _HOPPER.max_warps_per_sm * 32,
    "max_blocks_per_sm": _HOPPER.max_blocks_per_sm,
}

DEVICES: dict[str, DeviceSpec] = {
    "h100": DeviceSpec(
        key="h100",
        name="NVIDIA H100 SXM5 80GB",
        vendor="nvidia",
        names=("h100",),
        compute_units=132,
        memory_bandwidth=Ceiling(3350, "GB/s", "datasheet", "HBM3"),
        rates=dict(_HOPPER_RATES),
        l2_bytes=50 * 1024 * 1024,
        **_HOPPER_SM,
    ),
    "h200": DeviceSpec(
        key="h200",
        name="NVIDIA H200 SXM 141GB",
        vendor="nvidia",
        names=("h200",),
        compute_units=132,
        memory_bandwidth=Ceiling(
            4800,
            "GB/s",
            "datasheet",
            "HBM3e; a device-to-device copy measured ~4,225 GB/s on the lent H200 (benchmarks/gpu/results/run2)",
        ),
        rates=dict(_HOPPER_RATES),
        l2_bytes=60 * 1024 * 1024,  # as torch reports it on the lent H200
        **_HOPPER_SM,
    ),
    "ascend910b": DeviceSpec(
        key="ascend910b",
        name="Huawei Ascend 910B",
        vendor="huawei",
        names=("910b", "ascend910_93"),
        compute_units=20,  # cube cores of 910B3 / 910B4; 910B1/B2 have 24 or 25
        vector_units=40,
        memory_bandwidth=Ceiling(1600, "GB/s", "datasheet", "HBM2e, approximate public figure"),
        rates={
            "fp16": _tf(313, note="approximate public figure, varies by SKU"),
            "bf16": _tf(313, note="approximate public figure, varies by SKU"),
        },
        notes="SKU-dependent; a runner on the device reports the real AI-core and vector-core counts",
    ),
    "ascend950": DeviceSpec(
        key="ascend950",
        name="Huawei Ascend 950",
        vendor="huawei",
        names=("ascend950", "950pr", "950dt"),
        compute_units=None,  # not published
        memory_bandwidth=Ceiling(1600, "GB/s", "announced", "950PR with HiBL 1.0; 950DT announced at 4,000"),
        rates={"fp8": _tf(1000, "announced", "Huawei Connect 2025")},
        notes="announced figures only (Huawei Connect 2025); no datasheet at the time of writing",
    ),
}


def lookup(reported_name: str | None) -> DeviceSpec | None:
    """The spec whose name pattern the runtime's device name contains ("NVIDIA H200" -> h200)."""
    if not reported_name:
        return None
    low = reported_name.lower().replace(" ", "")
    for spec in DEVICES.values():
        if any(pattern.replace(" ", "") in low for pattern in spec.names):
            return spec
    return None


def from_runner(device: dict[str, Any], measured: dict[str, Any] | None = None) -> DeviceSpec | None:
    """The spec for a runner's device report, with counts the runner read and ceilings it measured applied.

    An unknown device with a measured copy ceiling still yields a spec (named by the runner), so a new GPU can
    be analyzed against what was measured on it."""
    spec = lookup(device.get("name"))
    if spec is None:
        if not (measured and measured.get("copy_gbps")):
            return None
        spec = DeviceSpec(
            key="unknown",
            name=str(device.get("name", "unknown device")),
            vendor=str(device.get("vendor", "unknown")),
            names=(),
            compute_units=None,
            memory_bandwidth=Ceiling(float(measured["copy_gbps"]), "GB/s", "measured"),
        )
    changes: dict[str, Any] = {}
    counts = {
        "compute_units": device.get("sm_count") or device.get("ai_cores"),
        "vector_units": device.get("vector_cores"),
        "regs_per_sm": device.get("regs_per_sm"),
        "smem_per_sm": device.get("smem_per_sm"),
        "max_threads_per_sm": device.get("max_threads_per_sm"),
        "l2_bytes": device.get("l2_bytes"),
    }
    changes.update({k: int(v) for k, v in counts.items() if isinstance(v, (int, float)) and v})
    spec = replace(spec, **changes)
    return with_measured(spec, measured) if measured else spec


def with_measured(spec: DeviceSpec, measured: dict[str, Any]) -> DeviceSpec:
    """Replace datasheet ceilings by measured ones: `copy_gbps` (read + write) and `bf16_tflops`."""
    changes: dict[str, Any] = {}
    copy = measured.get("copy_gbps")
    if isinstance(copy, (int, float)) and copy > 0:
        sheet = spec.memory_bandwidth
        note = "device-to-device copy" + (
            f"; {sheet.source} {sheet.value:,.0f} GB/s" if sheet.source != "measured" else ""
        )
        changes["memory_bandwidth"] = Ceiling(float(copy), "GB/s", "measured", note)
    bf16 = measured.get("bf16_tflops")
    if isinstance(bf16, (int, float)) and bf16 > 0:
        rates = dict(spec.rates)
        old = rates.get("bf16")
        note = "bf16 matmul through torch" + (
            f"; {old.source} {old.value:,.0f} TFLOP/s" if old is not None and old.source != "measured" else ""
        )
        rates["bf16"] = Ceiling(float(bf16), "TFLOP/s", "measured", note)
        changes["rates"] = rates
    return replace(spec, **changes) if changes else spec
