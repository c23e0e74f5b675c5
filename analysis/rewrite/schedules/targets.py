"""Target-dependent choices of the schedules, in one place (the matmul/attention schedules import it too).

CUDA: 16-byte vector accesses per thread, warps of 32 threads, a few resident programs per SM to hide latency.
Ascend (`ascend*` targets): the contiguous axis of a tile is a multiple of 32 bytes, every live tile of a program
shares the ~192 KB unified buffer, and one program runs per AI core (so "enough programs" means one per core).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.targets import is_ascend_target

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


def choices(target: str) -> TargetChoices:
    if is_ascend_target(target):
        return TargetChoices(True, AI_CORES_GUESS, UB_BYTES_ASCEND, (1024, 4096), None)
    return TargetChoices(False, PROGRAMS_PER_SM * SMS_GUESS, ROW_TILE_BYTES_CUDA, (256, 1024), 8)
