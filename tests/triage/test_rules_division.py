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
    tl.store(out_ptr + row * n + offs, x / rms, mask=offs < n)
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
