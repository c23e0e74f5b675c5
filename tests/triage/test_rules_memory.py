"""TL109, TL113, TL124: strided innermost access, int64 index blocks, per-lane division in loops."""

from __future__ import annotations

from triage_helpers import locate, of

STRIDED_1D = """
import triton
import triton.language as tl

@triton.jit
def even_elements(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * 2, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)
"""


def test_tl109_fires_on_literal_stride_of_1d_offsets() -> None:
    (f,) = of(STRIDED_1D, "TL109")
    assert f.span == locate(STRIDED_1D, "offs * 2")
    assert "2 elements apart" in f.message


def test_tl109_fires_on_2d_lane_axis_times_constexpr_stride_through_a_name() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def transpose_read(x_ptr, out_ptr, STRIDE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        ptrs = x_ptr + rm[:, None] + rn[None, :] * STRIDE
        tl.store(out_ptr + rm[:, None] * BN + rn[None, :], tl.load(ptrs))

    transpose_read[(1,)](x, y, STRIDE=4096, BM=64, BN=64)
    """
    (f,) = of(src, "TL109")
    assert f.span == locate(src, "rn[None, :] * STRIDE")
    assert "4096" in f.message


def test_tl109_silent_for_runtime_strides_and_row_axis(data_source) -> None:
    # Runtime strides are specialized to 1 by the JIT when they are 1; the tutorial matmul relies on it.
    assert not of(data_source("good_matmul.py"), "TL109")
    assert not of(STRIDED_1D.replace("offs * 2", "offs * 1"), "TL109")
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def rows(x_ptr, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        tl.store(x_ptr + rm[:, None] * 512 + rn[None, :], 0.0)
    """
    assert not of(src, "TL109")


INT64 = """
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def test_tl113_fires_on_widened_offset_block_only() -> None:
    (f,) = of(INT64, "TL113")
    assert f.span == locate(INT64, "(pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)")


def test_tl113_silent_for_scalar_widening_and_float_casts() -> None:
    scalar_only = INT64.replace(
        "(pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)", "pid * BLOCK + tl.arange(0, BLOCK)"
    )
    assert not of(scalar_only, "TL113")
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.int64)
        tl.store(x_ptr + offs, x)
    """
    assert not of(src, "TL113")


DIVMOD = """
import triton
import triton.language as tl

@triton.jit
def bias_add(x_ptr, b_ptr, n, n_cols, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        col = offs % n_cols
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x + tl.load(b_ptr + col), mask=offs < n)
"""


def test_tl124_fires_on_runtime_modulo_of_index_in_loop() -> None:
    (f,) = of(DIVMOD, "TL124")
    assert f.span == locate(DIVMOD, "offs % n_cols")
    assert "n_cols" in f.message


def test_tl124_silent_outside_loops_and_for_constexpr_divisors(data_source) -> None:
    assert not of(data_source("good_matmul.py"), "TL124")
    from triage_helpers import EXAMPLES

    # The tutorial-style matmul wraps offsets with `% M` once per program: not reported.
    assert not of((EXAMPLES / "matmul.py").read_text(encoding="utf-8"), "TL124")
    constexpr = DIVMOD.replace("n, n_cols, BLOCK", "n, BLOCK, n_cols: tl.constexpr")
    assert not of(constexpr, "TL124")


# Held-out misreadings (docs/precision.md, "Held-out files").
PAIRS = """
import triton
import triton.language as tl

@triton.jit
def split_pairs(x_ptr, lo_ptr, hi_ptr, stride_r, BR: tl.constexpr, BD: tl.constexpr):
    r = tl.arange(0, BR)
    d = tl.arange(0, BD // 2)
    lo = tl.load(x_ptr + r[:, None] * stride_r + d[None, :] * 2)
    hi = tl.load(x_ptr + r[:, None] * stride_r + d[None, :] * 2 + 1)
    tl.store(lo_ptr + r[:, None] * (BD // 2) + d[None, :], lo)
    tl.store(hi_ptr + r[:, None] * (BD // 2) + d[None, :], hi)
"""


def test_tl109_silent_when_even_and_odd_halves_are_both_read() -> None:
    assert not of(PAIRS, "TL109")
    named = """
    import triton
    import triton.language as tl

    @triton.jit
    def rotate(x_ptr, BD: tl.constexpr):
        even = tl.arange(0, BD // 2) * 2
        odd = even + 1
        a = tl.load(x_ptr + even)
        b = tl.load(x_ptr + odd)
        tl.store(x_ptr + even, -b)
        tl.store(x_ptr + odd, a)
    """
    assert not of(named, "TL109")
    # only the even half: half of every sector is wasted
    (f,) = of(PAIRS.replace(" + d[None, :] * 2 + 1)", " + d[None, :])"), "TL109")
    assert f.data["stride"] == 2


def test_tl124_one_finding_for_a_quotient_and_remainder_pair() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def chunk_amax(x_ptr, out_ptr, n, D, stride_s, BLOCK: tl.constexpr):
        acc = 0.0
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            s = offs // D
            d = offs % D
            acc = tl.maximum(acc, tl.max(tl.load(x_ptr + s * stride_s + d, mask=offs < n)))
        tl.store(out_ptr, acc)
    """
    (f,) = of(src, "TL124")
    assert f.span == locate(src, "offs // D")
    assert "`offs % D`" in f.message and "(%, //)" in f.message


def test_tl124_silent_for_a_loop_invariant_division() -> None:
    # fresh held-out (tritonbench gather_gemv): `x0 % rnumel` of the program's rows inside the reduction loop
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def gemv(w_ptr, x_ptr, out_ptr, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
        x0 = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
        acc = tl.zeros([XBLOCK, RBLOCK], dtype=tl.float32)
        for roffset in range(0, rnumel, RBLOCK):
            r1 = roffset + tl.arange(0, RBLOCK)[None, :]
            w = tl.load(w_ptr + r1 + rnumel * (x0 % rnumel))
            acc += w * tl.load(x_ptr + r1)
        tl.store(out_ptr + x0, tl.sum(acc, 1)[:, None])
    """
    assert not of(src, "TL124")
    assert len(of(src.replace("(x0 % rnumel)", "((x0 + roffset) % rnumel)"), "TL124")) == 1
