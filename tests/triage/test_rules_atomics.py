"""TL132: one atomic per program onto one address; counters, per-row atomics and small grids stay silent."""

from __future__ import annotations

from triage_helpers import locate, of

SUM = """
import torch
import triton
import triton.language as tl

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))

def run(x):
    out = torch.zeros(1, device=x.device)
    total[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
"""


def test_tl132_fires_on_a_grid_wide_atomic_of_partial_sums() -> None:
    (f,) = of(SUM, "TL132")
    assert f.span == locate(SUM, "tl.atomic_add(out_ptr, tl.sum(x, axis=0))")


def test_tl132_silent_for_counters_per_row_atomics_and_tiny_grids() -> None:
    assert not of(
        SUM.replace("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr, 1)"), "TL132"
    )
    per_row = SUM.replace("tl.atomic_add(out_ptr, ", "tl.atomic_add(out_ptr + tl.program_id(0) // 4, ")
    assert not of(per_row, "TL132")
    assert not of(SUM.replace("(triton.cdiv(x.numel(), 1024),)", "(4,)"), "TL132")
