"""What tritonlens assumes about each Ascend SoC: core counts and on-chip buffer sizes.

Sources (checked 2026-11): CANN's platform_config/<SoC>.ini files (`ai_core_cnt`, `vector_core_cnt`,
`ub_size=196608`, `l1_size=524288`, `l0_c_size=131072`), as quoted in public repositories; triton-ascend's
docs ("Atlas 800T/I A2 has an on-chip memory capacity of 192 KB", programming_guide.md: one AI core is one
cube core paired with two vector cores); Ascend C's GetRuntimeUBSize (Ascend 950: 248 KB, 216 KB when SIMD
and SIMT mix). The numbers on a real device come from
`triton.runtime.driver.active.utils.get_device_properties(dev)` ("num_aicore", "num_vectorcore"); a
request's metadata may carry those and then wins over this table.
"""

from __future__ import annotations

from dataclasses import dataclass

KB = 1024
# The runtime caps a launch at this many blocks unless auto-blockify folds the grid (triton-ascend docs).
MAX_GRID_BLOCKS = 65535


@dataclass(frozen=True)
class AscendDevice:
    soc: str
    ai_cores: int | None  # cube cores (AIC); a mix (CV) kernel runs one block per AI core
    vector_cores: int | None  # AIV; a vector-only kernel runs one block per vector core
    ub_bytes: int  # Unified Buffer per vector core
    l1_bytes: int
    l0c_bytes: int
    note: str = ""


_A2_UB = 192 * KB
DEVICES: dict[str, AscendDevice] = {
    "ascend910b1": AscendDevice("Ascend910B1", 24, 48, _A2_UB, 512 * KB, 128 * KB),
    "ascend910b2": AscendDevice("Ascend910B2", 24, 48, _A2_UB, 512 * KB, 128 * KB),
    "ascend910b3": AscendDevice("Ascend910B3", 20, 40, _A2_UB, 512 * KB, 128 * KB),
    "ascend910b4": AscendDevice("Ascend910B4", 20, 40, _A2_UB, 512 * KB, 128 * KB),
    "ascend910_9391": AscendDevice("Ascend910_9391", 24, 48, _A2_UB, 512 * KB, 128 * KB),
    "ascend950": AscendDevice(
        "Ascend950", None, None, 248 * KB, 512 * KB, 256 * KB, note="core counts not published for this table"
    ),
}


def device_for(target: str, metadata: dict | None = None) -> AscendDevice | None:
    """The table entry for a request target (e.g. "ascend910b3"), with core counts from metadata if given."""
    base = DEVICES.get(target.lower())
    if base is None:
        return None
    meta = metadata or {}
    ai = meta.get("num_aicore")
    vec = meta.get("num_vectorcore")
    if isinstance(ai, int) or isinstance(vec, int):
        return AscendDevice(
            base.soc,
            ai if isinstance(ai, int) else base.ai_cores,
            vec if isinstance(vec, int) else base.vector_cores,
            base.ub_bytes,
            base.l1_bytes,
            base.l0c_bytes,
            note="core counts from the device",
        )
    return base
