"""TL143: a grid of `n // BLOCK` programs, each starting a block apart, leaves the tail of the data to no program.
Quiet for a ceiling written by hand, a size the launching function asserts to be a multiple, a kernel whose
programs stride over the work, and a floor division that is no block count of the kernel."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

ROWS = """
import torch
import triton
import triton.language as tl

@triton.jit
def scale_rows(x_ptr, y_ptr, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offs = rows[:, None] * n_cols + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)

def scale(x):
    M, N = x.shape
    y = torch.empty_like(x)
    BLOCK_M = 16
    grid = (M // BLOCK_M,)
    scale_rows[grid](x, y, N, BLOCK_M=BLOCK_M, BLOCK_N=N)
    return y
"""


def test_tl143_on_a_floored_grid_of_row_blocks() -> None:
    (f,) = of(ROWS, "TL143")
    assert f.severity == Severity.WARNING
    assert f.span.line == locate(ROWS, "scale_rows[grid]").line
    assert "`M % BLOCK_M`" in f.message and "program_id(0) * BLOCK_M" in f.message


def test_tl143_quiet_where_the_tail_is_covered_or_asserted_away() -> None:
    ceiling = ROWS.replace("grid = (M // BLOCK_M,)", "grid = ((M + BLOCK_M - 1) // BLOCK_M,)")
    asserted = ROWS.replace("    grid = (M // BLOCK_M,)", "    assert M % BLOCK_M == 0\n    grid = (M // BLOCK_M,)")
    strided = ROWS.replace(
        "    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)",
        "    for again in range(pid, n_cols, tl.num_programs(0)):\n        tl.store(y_ptr + offs + again, tl.load(x_ptr + offs))")
    other = ROWS.replace("grid = (M // BLOCK_M,)", "grid = (M // 2,)")
    # the size asserted a multiple of another constant that is a multiple of the block (the fused-attention
    # tutorial's backward: `assert N_CTX % PRE_BLOCK == 0` beside `BLOCK_N1 = 128`)
    by_value = ROWS.replace("    grid = (M // BLOCK_M,)", "    PRE = 32\n    assert M % PRE == 0\n    grid = (M // BLOCK_M,)")
    unpacked = ROWS.replace("    BLOCK_M = 16\n", "    BLOCK_M, PRE = 16, 32\n    PRE = 32\n").replace(
        "    grid = (M // BLOCK_M,)", "    assert M % PRE == 0\n    grid = (M // BLOCK_M,)")  # tuple, set twice alike
    for quiet in (ceiling, asserted, strided, other, by_value, unpacked):
        assert quiet != ROWS
        assert not of(quiet, "TL143")


def test_tl143_holds_when_the_asserted_constant_is_no_multiple_of_the_block() -> None:
    coarser = ROWS.replace("    grid = (M // BLOCK_M,)", "    PRE = 8\n    assert M % PRE == 0\n    grid = (M // BLOCK_M,)")
    assert coarser != ROWS and len(of(coarser, "TL143")) == 1  # a multiple of 8 need not be one of 16


COPY = """
import torch
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x)

def run(x):
    y = torch.empty_like(x)
    n = x.numel()
    copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
"""


def test_tl144_on_an_unmasked_store_under_a_ceiling_grid() -> None:
    (f,) = of(COPY, "TL144")
    assert f.severity == Severity.WARNING and f.span.line == locate(COPY, "tl.store(y_ptr + offs, x)").line
    assert "`triton.cdiv(n, 1024)`" in f.message and "program_id(0) * BLOCK" in f.message
    by_hand = COPY.replace("copy[(triton.cdiv(n, 1024),)]", "copy[((n + 1024 - 1) // 1024,)]")
    assert len(of(by_hand, "TL144")) == 1
    atomic = COPY.replace("tl.store(y_ptr + offs, x)", "tl.atomic_add(y_ptr + offs, x)")
    assert len(of(atomic, "TL144")) == 1


def test_tl144_quiet_for_masked_or_asserted_writes_and_other_axes() -> None:
    masked = COPY.replace("tl.store(y_ptr + offs, x)", "tl.store(y_ptr + offs, x, mask=offs < n)")
    asserted = COPY.replace("    n = x.numel()\n", "    n = x.numel()\n    assert n % 1024 == 0\n")
    one_row = COPY.replace("tl.store(y_ptr + offs, x)", "tl.store(y_ptr + tl.arange(0, BLOCK), x)")
    for quiet in (masked, asserted, one_row):
        assert quiet != COPY
        assert not of(quiet, "TL144")


def test_tl144_reads_a_meta_grid() -> None:
    meta = COPY.replace("copy[(triton.cdiv(n, 1024),)]", "copy[lambda meta: (triton.cdiv(n, meta['BLOCK']),)]")
    assert meta != COPY
    (f,) = of(meta, "TL144")  # meta["BLOCK"] is the launch's BLOCK=1024
    assert "program_id(0) * BLOCK" in f.message
    floor = ROWS.replace("scale_rows[grid]", "scale_rows[lambda META: (M // META['BLOCK_M'],)]")
    assert floor != ROWS and len(of(floor, "TL143")) == 1


def test_an_assert_on_the_value_the_launch_passes_for_the_block_counts() -> None:
    meta = COPY.replace("copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)",
                        "size = 1024\n    assert x.shape[-1] % size == 0\n"
                        "    copy[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](x, y, n, BLOCK=size)")
    assert meta != COPY and not of(meta, "TL144")  # rows a multiple of `size` make n one too


def test_tl144_names_wrapped_indices_and_reads_a_swizzle_that_only_sizes_the_grid() -> None:
    wrapped = COPY.replace("    offs = pid * BLOCK + tl.arange(0, BLOCK)\n",
                           "    offs = (pid * BLOCK + tl.arange(0, BLOCK)) % n\n").replace(
        "    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)\n    tl.device_assert(pid < tl.num_programs(0))\n")
    assert wrapped != COPY
    (f,) = of(wrapped, "TL144")  # num_programs sizes the index here; the programs do not loop over the work
    assert "wrap (`%`) onto the first elements" in f.message
