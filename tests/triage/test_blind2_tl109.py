"""TL109 (issue 24): a stride on the row axis (`rows[:, None]`) is not a strided innermost access."""

from __future__ import annotations

from triage_helpers import of

GROUPED = """
import triton
import triton.language as tl

@triton.jit
def grouped(x_ptr, out_ptr, L, C: tl.constexpr, BLK: tl.constexpr):
    lane = tl.program_id(0) % 8
    rows = tl.arange(0, BLK // 8) * 8 + lane
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=rows[:, None] < L)
    tl.store(out_ptr + rows[:, None] * C + cols[None, :], x * 2.0, mask=rows[:, None] < L)
"""


def test_tl109_silent_for_a_stride_on_the_row_axis() -> None:
    assert not of(GROUPED, "TL109")


def test_tl109_still_fires_when_the_strided_lanes_are_the_inner_axis() -> None:
    src = GROUPED.replace("rows[:, None] * C + cols[None, :], x", "rows * C, tl.sum(x, axis=1)")
    (f,) = of(src, "TL109")
    assert f.data["stride"] == 8
