"""The TL4xx check family: the checks run over one triton-ascend compile, each with the rules it emits.

The checks live by what they read: `compiler_ascend_access` (TL401 discrete access, TL402 int64 tile ops),
`compiler_ascend_ub` (TL403 UB capacity, TL405 tail alignment, TL407 masked-load padding) and
`compiler_ascend_grid_and_loops` (TL404 grid vs cores, TL406 unrolled static_range); their context is
`compiler_ascend_context.AscendContext`.
"""

from __future__ import annotations

from ...core.rules import register_check
from .access import check_discrete_access, check_int_vector_ops
from .grid_and_loops import check_grid, check_static_range
from .rules import (
    DISCRETE_ACCESS,
    GRID_VS_CORES,
    INT_VECTOR_DEGRADED,
    MASKED_LOAD_PADDING,
    STATIC_RANGE_UNROLLED,
    TAIL_UNALIGNED,
    UB_OVERFLOW_RULE,
)
from .ub import check_masked_padding, check_tail_alignment, check_ub_capacity

# The TL4xx checks over triton-ascend's ttadapter, with the rules each emits (compiler_ascend.py runs the
# family; a new TL4xx rule's module registers its own check the same way).
ASCEND_FAMILY = "ascend"
for _check, *_emits in (
    (check_discrete_access, DISCRETE_ACCESS),
    (check_int_vector_ops, INT_VECTOR_DEGRADED),
    (check_ub_capacity, UB_OVERFLOW_RULE),
    (check_grid, GRID_VS_CORES),
    (check_tail_alignment, TAIL_UNALIGNED),
    (check_static_range, STATIC_RANGE_UNROLLED),
    (check_masked_padding, MASKED_LOAD_PADDING),
):
    register_check(ASCEND_FAMILY, *_emits)(_check)
