"""Ascend rules grounded in BiSheng's own pipeline decisions (the `hivm` stage): TL408-TL409.

TL403 (UB capacity) lives with the other TL40x rules; with the hivm stage it cites bishengir's numbers.
"""

from __future__ import annotations

from ...core.findings import Level, Severity
from ...core.rules import Rule, register
from .rules import PERFORMANCE_GUIDE, PROGRAMMING_GUIDE

SCALAR_FALLBACK = register(
    Rule(
        code="TL408",
        name="hivm-scalar-fallback",
        title="BiSheng moves single elements between tiles and the scalar unit on this line",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "After bishengir's InsertLoadStoreForScalar pass, the HIVM IR shows which values the scalar unit "
            "handles one element at a time: `memref.load`/`memref.store` are single-element global-memory "
            "accesses, `tensor.extract`/`tensor.insert` move one element between a vector tile in the Unified "
            "Buffer and the scalar unit, and each such move makes the pipes synchronize (set_flag/wait_flag "
            "between PIPE_V and PIPE_S). Inside a loop this serializes the vector and scalar units. Keep "
            "addresses affine in `tl.arange` so the data mover copies blocks, and keep values in tiles."
        ),
        references=(PROGRAMMING_GUIDE, PERFORMANCE_GUIDE),
    )
)

SCALAR_SYNC_IN_LOOP = register(
    Rule(
        code="TL409",
        name="hivm-scalar-sync-in-loop",
        title="Inside a loop, the scalar unit waits on the vector or data-mover pipes",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "bishengir's sync insertion (GraphSyncSolver / InjectSync) puts a set_flag/wait_flag pair between two "
            "pipes whenever one consumes what the other produced. A wait on PIPE_S inside a loop means every "
            "iteration stops the scalar unit until the vector unit (PIPE_V) or a data move (PIPE_MTE2/MTE3) "
            "finishes: the pipes cannot overlap. Usually a scalar read of a tile value (`x[0]`, a reduction "
            "used as an address or loop bound) causes it; compute it as a tile, or hoist it out of the loop."
        ),
        references=(PERFORMANCE_GUIDE,),
    )
)
