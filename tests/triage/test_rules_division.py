"""TL135: per-element division by a scalar."""

from __future__ import annotations

from triage_helpers import locate, of

NORM = """
import triton
import triton.language as tl

@triton.jit
def norm(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    for start in range(0, n, BLOCK):  # a loop over tiles with per-element math: where the divides show
        x = tl.load(x_ptr + row * n + start + offs, mask=start + offs < n, other=0.0)
        tl.store(out_ptr + row * n + start + offs, tl.exp(x / rms), mask=start + offs < n)
"""


def test_tl135_fires_on_a_block_divided_by_a_row_scalar() -> None:
    (f,) = of(NORM, "TL135")
    assert f.span == locate(NORM, "x / rms")


def test_tl135_silent_for_reciprocal_multiply_scalar_math_and_index_division() -> None:
    assert not of(NORM.replace("x / rms", "x * (1.0 / rms)"), "TL135")
    # scalar / scalar (the mean) and a block divided by a block are not the pattern
    assert not of(NORM.replace("x / rms", "x / (x + 1.0)"), "TL135")
    index = NORM.replace("x / rms", "(offs / n).to(tl.float32)")
    assert not of(index, "TL135")


def test_tl135_silent_for_means_and_quantization_scales() -> None:
    assert not of(NORM.replace("x / rms", "x / n"), "TL135")  # averaging by a size
    quant = NORM.replace("x / rms", "(x / rms).to(tl.float8e4nv)")
    assert not of(quant, "TL135")


def test_tl135_silent_for_a_vector_beside_tile_work_and_clamp_cast_quantizers() -> None:
    tile = """
    import triton
    import triton.language as tl

    @triton.jit
    def step(q_ptr, h_ptr, o_ptr, K: tl.constexpr, V: tl.constexpr):
        o_k = tl.arange(0, K)
        o_v = tl.arange(0, V)
        q = tl.load(q_ptr + o_k)
        q = q / tl.sqrt(tl.sum(q * q) + 1e-6)
        h = tl.load(h_ptr + o_k[:, None] * V + o_v[None, :])
        tl.store(o_ptr + o_v, tl.sum(h * q[:, None], 0))
    """
    assert not of(tile, "TL135")
    quant = """
    import triton
    import triton.language as tl

    @triton.jit
    def quant(y_ptr, q_ptr, s_ptr, eps, fp8_min, fp8_max, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        y = tl.load(y_ptr + cols).to(tl.float32)
        y_s = tl.maximum(tl.max(tl.abs(y)), eps) / fp8_max
        tl.store(q_ptr + cols, tl.clamp(y / y_s, fp8_min, fp8_max).to(q_ptr.dtype.element_ty))
        tl.store(s_ptr, y_s)
    """
    assert not of(quant, "TL135")
    # a 1-D kernel dividing its whole row by the row's max once per program is memory-bound: not reported
    # (blind sample 3); the same division in a loop over tiles with per-element math is
    row = quant.replace("tl.clamp(y / y_s, fp8_min, fp8_max).to(q_ptr.dtype.element_ty)", "y / y_s")
    assert not of(row, "TL135")
    looped = row.replace(
        "        tl.store(q_ptr + cols, y / y_s)\n",
        "        for i in range(4):\n            tl.store(q_ptr + i * BLOCK + cols, tl.exp(y / y_s))\n",
    )
    assert len(of(looped, "TL135")) == 1


def test_tl135_silent_for_a_mean_of_per_row_sums_kept_2d() -> None:
    # fresh held-out (tritonbench welford, Inductor-style code): `tl.sum(x, 1)[:, None] / rnumel` through an alias
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def row_mean(in_ptr, out_ptr, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
        x0 = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
        acc = tl.zeros([XBLOCK, RBLOCK], dtype=tl.float32)
        for roffset in range(0, rnumel, RBLOCK):
            r1 = roffset + tl.arange(0, RBLOCK)[None, :]
            acc += tl.load(in_ptr + r1 + rnumel * x0, r1 < rnumel)
        tmp3 = tl.sum(acc, 1)[:, None]
        tmp5 = rnumel
        tmp6 = tmp3 / tmp5
        tl.store(out_ptr + x0, tmp6)
    """
    assert not of(src, "TL135")
