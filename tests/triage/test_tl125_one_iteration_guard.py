"""TL125 (issue 24, blind3): a reduction guarded to run on one iteration of an unrolled loop (`if i == 0:`) runs
once per program, not per iteration: no finding. The same reduction under a guard that holds on many iterations
(`i > 0`, or a flag alone) still is one."""

from __future__ import annotations

from triage_helpers import of

GUARDED = """
import triton
import triton.language as tl

@triton.jit
def conv_bwd(dy_ptr, db_ptr, W: tl.constexpr, BT: tl.constexpr, HAS_BIAS: tl.constexpr):
    offs = tl.arange(0, BT)
    db = 0.0
    for k in tl.static_range(W):
        dy = tl.load(dy_ptr + k * BT + offs)
        if HAS_BIAS and k == 0:
            db += tl.sum(dy)
    tl.store(db_ptr, db)
"""


def test_reduction_on_one_iteration_is_silent() -> None:
    assert not of(GUARDED, "TL125")
    assert not of(GUARDED.replace("k == 0", "W - 1 == k"), "TL125")


def test_reduction_on_many_iterations_still_fires() -> None:
    for guard in ("k > 0", "HAS_BIAS", "k == k"):
        (f,) = of(GUARDED.replace("HAS_BIAS and k == 0", guard), "TL125")
        assert f.data["accumulator"] == "db"
