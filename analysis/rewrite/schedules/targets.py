"""Target-dependent choices of every schedule, in one place: streaming/reduction blocks and the tl.dot tiles.

CUDA: 16-byte vector accesses per thread, warps of 32 threads, a few resident programs per SM to hide latency.
Ascend (`ascend*` targets): the contiguous axis of a tile is a multiple of 32 bytes, every live tile of a program
shares the ~192 KB unified buffer, and one program runs per AI core (so "enough programs" means one per core).

tl.dot tiles (matmul, attention). CUDA (sm_8x/9x): 128 x 128 output tiles over K-steps of 32 keep two fp32 operand
tiles per stage in shared memory (3 stages: 96 KB) and 8 warps on the tensor cores; config search then moves each
value. Ascend: the cube unit wants M/N/K tiles in multiples of 16 (fp16), the operand tiles of a stage share the
~1 MB L1 and the accumulator the ~192 KB unified buffer (128 x 128 fp32 = 64 KB); there are no warps or stages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.targets import is_ascend_target
from ..model import RecipeContext

VECTOR_BYTES_CUDA = 16  # one 128-bit load or store per thread
ALIGN_BYTES_ASCEND = 32  # the unified buffer's access granule
UB_BYTES_ASCEND = 192 * 1024
PROGRAMS_PER_SM = 4  # resident programs per SM a streaming kernel needs to hide memory latency
SMS_GUESS = 132  # H200 / H100 SXM: the device table's sm_9x entry (a guess when nothing was profiled)
AI_CORES_GUESS = 20  # ascend910b3 / b4 vector-capable cube cores
ROW_TILE_BYTES_CUDA = 64 * 1024  # one row held in registers across a program (beyond this it spills)


@dataclass(frozen=True)
class TargetChoices:
    ascend: bool
    programs_to_fill: int  # programs that keep every core busy
    row_bytes_on_chip: int  # the largest row (all its live copies) a fused row kernel holds on chip
    scan_blocks: tuple[int, ...]  # block sizes a blocked scan is offered with
    scan_rows: tuple[int, ...]  # rows per step of a blocked scan of a block of columns (tiles of rows x columns)
    num_warps: int | None  # None on Ascend (no warps)

    def elements_per_access(self, element_bytes: int = 4) -> int:
        """Elements one thread (CUDA) or one aligned granule (Ascend) moves at once."""
        width = ALIGN_BYTES_ASCEND if self.ascend else VECTOR_BYTES_CUDA
        return max(1, width // max(1, element_bytes))

    def row_elements_on_chip(self, live_copies: int, element_bytes: int = 4) -> int:
        """The longest row (a power of two) whose `live_copies` tiles fit on chip at once."""
        limit = self.row_bytes_on_chip // max(1, live_copies * element_bytes)
        power = 1
        while power * 2 <= limit:
            power *= 2
        return power


def measured_grid(ctx: RecipeContext) -> int | None:
    """The most programs a profiled launch of the context's kernel had (a measured fact), or None unprofiled."""
    grids = [math.prod(int(g) for g in rec.get("grid") or [1]) for rec in (ctx.profile or {}).get("launches") or []
             if isinstance(rec, dict) and rec.get("kernel") == ctx.kernel]
    return max(grids) if grids else None


def choices(target: str) -> TargetChoices:
    if is_ascend_target(target):
        return TargetChoices(True, AI_CORES_GUESS, UB_BYTES_ASCEND, (1024, 4096), (8, 32), None)
    return TargetChoices(False, PROGRAMS_PER_SM * SMS_GUESS, ROW_TILE_BYTES_CUDA, (256, 1024), (8, 32), 8)


@dataclass(frozen=True)
class DotTiles:
    block_m: int
    block_n: int
    block_k: int
    group_m: int  # output-tile rows swept together (grouped program order: operand tiles reused in L2)
    num_warps: int | None  # None on Ascend
    num_stages: int | None


@dataclass(frozen=True)
class AttentionTiles:
    block_m: int  # query rows per program
    block_n: int  # keys per step of the online softmax
    num_warps: int | None
    num_stages: int | None


def dot_tiles(target: str) -> DotTiles:
    if is_ascend_target(target):
        return DotTiles(128, 128, 64, 8, None, None)
    return DotTiles(128, 128, 32, 8, 8, 3)


def wide_dot_tiles(target: str) -> DotTiles | None:
    """A second tile for 16-bit products on CUDA: 128x256x64, 8 warps, 3 stages (measured on an H100,
    bench/results/h100-dot-probe: 0.90x of cuBLAS at 4096^3 fp16 against 0.74x for the default); None on Ascend."""
    return None if is_ascend_target(target) else DotTiles(128, 256, 64, 8, 8, 3)


def attention_tiles(target: str) -> AttentionTiles:
    if is_ascend_target(target):
        return AttentionTiles(64, 64, None, None)
    return AttentionTiles(64, 64, 4, 2)
