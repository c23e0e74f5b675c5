"""TL108 (issue 24): re-reading a per-row vector next to the tiles a pass moves is not a second pass over the row."""

from __future__ import annotations

from triage_helpers import of

COMBINE = """
import triton
import triton.language as tl

@triton.jit
def combine(lse_ptr, o_ptr, out_ptr, S, M, D: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    m = tl.full([BLOCK_M], -float("inf"), tl.float32)
    for s in range(S):
        m = tl.maximum(m, tl.load(lse_ptr + s * M + rows))
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for s in range(S):
        w = tl.exp(tl.load(lse_ptr + s * M + rows) - m)
        acc += tl.load(o_ptr + (s * M + rows[:, None]) * D + cols[None, :]) * w[:, None]
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], acc)
"""


def test_tl108_silent_when_the_reread_is_a_vector_beside_tiles() -> None:
    assert not of(COMBINE, "TL108")


def test_tl108_fires_when_the_tiles_themselves_are_read_twice() -> None:
    src = COMBINE.replace(
        "        m = tl.maximum(m, tl.load(lse_ptr + s * M + rows))",
        "        m = tl.maximum(m, tl.max(tl.load(o_ptr + (s * M + rows[:, None]) * D + cols[None, :]), axis=1))",
    )
    # the first loop only finds the running max, the second sums against it: TL137 (online form) holds it
    (f,) = of(src, "TL108") + of(src, "TL137")
    assert f.code == "TL137" and f.data["pointer"] == "o_ptr"
