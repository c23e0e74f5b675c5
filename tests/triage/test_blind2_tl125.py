"""TL125 (issue 24): picking one element with tl.sum(tl.where(lanes == k, x, 0)) is not an accumulation."""

from __future__ import annotations

from triage_helpers import of

PICK = """
import triton
import triton.language as tl

@triton.jit
def pick(x_ptr, out_ptr, K: tl.constexpr, N: tl.constexpr):
    idx = tl.arange(0, N)
    x = tl.load(x_ptr + idx)
    left = x
    total = 0.0
    for _ in range(K):
        best = tl.argmax(left, axis=0)
        total += tl.sum(tl.where(idx == best, x, 0.0))
        left = tl.where(idx == best, -float("inf"), left)
    tl.store(out_ptr, total)
"""


def test_tl125_silent_for_one_element_picked_per_iteration() -> None:
    assert not of(PICK, "TL125")


def test_tl125_still_fires_on_a_masked_partial_sum() -> None:
    # a `<` mask keeps many lanes: that is a partial sum that a block accumulator would defer
    src = PICK.replace("tl.where(idx == best, x, 0.0))", "tl.where(idx < best, x, 0.0))")
    (f,) = of(src, "TL125")
    assert f.data["accumulator"] == "total"
