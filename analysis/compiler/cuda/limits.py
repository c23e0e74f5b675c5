"""Per-SM resource limits of NVIDIA architectures and the occupancy they allow.

Numbers from the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", and the
CUDA Occupancy Calculator: registers are allocated per warp in units of 256 (8 per thread), and each
resident block also reserves 1 KB of shared memory for the system on sm_80 and newer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.targets import cuda_capability


@dataclass(frozen=True)
class SmLimits:
    name: str
    registers_per_sm: int
    max_registers_per_thread: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int  # bytes usable by blocks (carve-out maximum)
    shared_per_block: int  # bytes a block may opt in to
    reserved_shared_per_block: int = 1024
    register_unit: int = 256  # per-warp allocation granularity


SM_LIMITS: dict[int, SmLimits] = {
    80: SmLimits("sm_80 (A100)", 65536, 255, 64, 32, 167936, 166912),
    86: SmLimits("sm_86 (RTX 30xx, A10)", 65536, 255, 48, 16, 102400, 101376),
    89: SmLimits("sm_89 (L4, L40, RTX 40xx)", 65536, 255, 48, 24, 102400, 101376),
    90: SmLimits("sm_90 (H100, H200)", 65536, 255, 64, 32, 233472, 232448),
    100: SmLimits("sm_100 (B200)", 65536, 255, 64, 32, 233472, 232448),
}


def limits_for(target: str) -> SmLimits | None:
    cap = cuda_capability(target)
    if cap is None:
        return None
    if cap in SM_LIMITS:
        return SM_LIMITS[cap]
    older = [c for c in SM_LIMITS if c <= cap]
    return SM_LIMITS[max(older)] if older else None


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    fraction: float  # resident warps / max warps
    limiter: str  # "registers" | "shared memory" | "warps" | "blocks"
    by_registers: int
    by_shared: int


def occupancy(limits: SmLimits, num_warps: int, registers: int, shared: int) -> Occupancy:
    """Programs resident per SM as CUDA's occupancy calculator reasons (the one calculator: the compiler's
    resource check and profiling's launch analysis both call it). `registers` 0 = unknown (not limiting)."""
    num_warps = max(num_warps, 1)
    regs_per_warp = -(-max(registers, 1) * 32 // limits.register_unit) * limits.register_unit
    by_regs = limits.registers_per_sm // (regs_per_warp * num_warps)
    per_block_smem = shared + limits.reserved_shared_per_block
    by_smem = limits.shared_per_sm // per_block_smem if shared > 0 else limits.max_blocks_per_sm
    by_warps = limits.max_warps_per_sm // num_warps
    # On a tie the structural limits win: when warps or block slots cap the SM as tightly as registers do,
    # fewer registers would not fit one more program, so "limited by registers" would be wrong advice.
    candidates = [
        (by_warps, "warps"),
        (limits.max_blocks_per_sm, "blocks"),
        (by_regs, "registers"),
        (by_smem, "shared memory"),
    ]
    blocks, limiter = min(candidates, key=lambda c: c[0])
    warps = blocks * num_warps
    return Occupancy(blocks, warps, warps / limits.max_warps_per_sm, limiter, by_regs, by_smem)
