"""TL116 on real Ascend idioms (issue 24): a scalar base read from memory plus tl.arange is one block DMA."""

from __future__ import annotations

from triage_helpers import locate, of

SCALAR_BASE = """
import triton
import triton.language as tl

@triton.jit
def fill(lens_ptr, table_ptr, out_ptr, N: tl.constexpr, PAGE: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    lens = tl.load(lens_ptr + offs, mask=offs <= pid, other=0)
    start = tl.sum(lens) - tl.load(lens_ptr + pid)
    cols = tl.arange(0, PAGE)
    tl.store(out_ptr + start + cols, cols)
    page = tl.load(table_ptr + start + cols // PAGE)
    tl.store(out_ptr + start + PAGE + cols, page)
    last = tl.load(table_ptr + start)
    tl.store(out_ptr + start * 2, last)
"""


def test_tl116_silent_for_scalar_bases_read_from_memory() -> None:
    # every address is a scalar (a reduction of loaded lengths, or one loaded element) plus arange lanes
    assert not of(SCALAR_BASE, "TL116")


def test_tl116_still_fires_when_the_lanes_are_loaded_indices() -> None:
    src = (
        SCALAR_BASE
        + """
@triton.jit
def gather(idx_ptr, src_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    idx = tl.load(idx_ptr + offs)
    rank = tl.cumsum(idx, axis=0)
    tl.store(out_ptr + rank, tl.load(src_ptr + idx))
"""
    )
    found = of(src, "TL116")
    assert {f.kernel for f in found} == {"gather"}
    assert {f.span for f in found} == {
        locate(src, "tl.load(src_ptr + idx)"),
        locate(src, "tl.store(out_ptr + rank, tl.load(src_ptr + idx))"),
    }


def test_tl116_silent_when_a_pointer_name_is_rebound_to_its_tile() -> None:
    src = """
import triton
import triton.language as tl

@triton.jit
def pre(out, dout, delta, D: tl.constexpr, B: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    cols = tl.arange(0, D)
    out = tl.load(out + rows[:, None] * D + cols[None, :])
    dout = tl.load(dout + rows[:, None] * D + cols[None, :])
    tl.store(delta + rows, tl.sum(out * dout, axis=1))
"""
    assert not of(src, "TL116")


def test_tl116_silent_for_whole_rows_at_loaded_indices() -> None:
    # rows picked by loaded indices, each row a contiguous `cols[None, :]` run: the form TL116's fix recommends
    src = """
import triton
import triton.language as tl

@triton.jit
def rows(idx_ptr, src_ptr, out_ptr, D: tl.constexpr, K: tl.constexpr):
    k = tl.arange(0, K)
    cols = tl.arange(0, D)
    idx = tl.load(idx_ptr + k)
    x = tl.load(src_ptr + idx[:, None] * D + cols[None, :])
    tl.store(out_ptr + k[:, None] * D + cols[None, :], x)
"""
    assert not of(src, "TL116")
