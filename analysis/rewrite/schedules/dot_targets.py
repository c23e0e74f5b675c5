"""Tile choices of the tl.dot schedules (matmul, attention) per target.

CUDA (sm_8x/9x): 128 x 128 output tiles over K-steps of 32 keep two fp32 operand tiles per stage in shared memory
(3 stages: 96 KB) and 8 warps on the tensor cores; config search then moves each value. Ascend (`ascend*`): the
cube unit wants M/N/K tiles in multiples of 16 (fp16), the operand tiles of a stage share the ~1 MB L1 and the
accumulator the ~192 KB unified buffer (128 x 128 fp32 = 64 KB); there are no warps or stages to set.
Kept apart from `targets.py` (the elementwise/reduction schedules' choices) until the two are merged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.targets import is_ascend_target


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


def attention_tiles(target: str) -> AttentionTiles:
    if is_ascend_target(target):
        return AttentionTiles(64, 64, None, None)
    return AttentionTiles(64, 64, 4, 2)
