"""TL138: interleaved fields accessed one small-stride access each (positive, negatives, near misses)."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

ROTARY = """
import triton
import triton.language as tl

@triton.jit
def rotate_pairs(x_ptr, cos_ptr, sin_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(x_ptr + i * 2, mask=m)
    b = tl.load(x_ptr + i * 2 + 1, mask=m)
    c = tl.load(cos_ptr + i, mask=m)
    s = tl.load(sin_ptr + i, mask=m)
    tl.store(x_ptr + i * 2, a * c - b * s, mask=m)
    tl.store(x_ptr + i * 2 + 1, a * s + b * c, mask=m)
"""


def test_tl138_on_even_and_odd_fields_read_separately() -> None:
    (f,) = of(ROTARY, "TL138")
    assert f.span == locate(ROTARY, "i * 2")
    assert f.severity == Severity.INFO and f.data["stride"] == 2 and "tl.split" in f.message
    assert f.data["lines"] == [locate(ROTARY, "a = tl.load").line, locate(ROTARY, "b = tl.load").line,
                               locate(ROTARY, "tl.store(x_ptr + i * 2,").line,
                               locate(ROTARY, "tl.store(x_ptr + i * 2 + 1").line]
    assert not of(ROTARY, "TL109")  # the fields together cover every element: not TL109's lone stride


def test_tl138_on_three_fields_through_names() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def norms(p_ptr, out_ptr, BLOCK: tl.constexpr):
        base = tl.arange(0, BLOCK) * 3
        x = tl.load(p_ptr + base)
        y = tl.load(p_ptr + base + 1)
        z = tl.load(p_ptr + base + 2)
        tl.store(out_ptr + tl.arange(0, BLOCK), x * x + y * y + z * z)
    """
    (f,) = of(src, "TL138")
    assert f.data["stride"] == 3 and "tl.reshape" in f.message


def test_tl138_silent_for_contiguous_lanes_a_lone_field_and_row_strides() -> None:
    contiguous = ROTARY.replace("i * 2 + 1", "i + n").replace("i * 2", "i")
    assert not of(contiguous, "TL138")
    lone = ROTARY.replace("    b = tl.load(x_ptr + i * 2 + 1, mask=m)\n", "    b = a\n").replace(
        "    tl.store(x_ptr + i * 2 + 1, a * s + b * c, mask=m)\n", ""
    )
    assert not of(lone, "TL138") and of(lone, "TL109")  # the lone strided field stays TL109's
    rows = """
    import triton
    import triton.language as tl

    @triton.jit
    def rows(x_ptr, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        a = tl.load(x_ptr + rm[:, None] * 2 + rn[None, :])
        b = tl.load(x_ptr + rm[:, None] * 2 + 1 + rn[None, :])
        tl.store(x_ptr + rm[:, None] * 2 + rn[None, :], a + b)
    """
    assert not of(rows, "TL138")  # the stride is on the row axis; lanes along rn are contiguous


def test_tl138_silent_for_a_large_stride() -> None:
    wide = ROTARY.replace("i * 2", "i * 64")
    assert not of(wide, "TL138")
