"""TL131 (issue 24): a per-token vector read along T at stride H, beside the kernel's 2-D tiles, is info only."""

from __future__ import annotations

from triage_helpers import of

from tritonlens.analysis.core.findings import Severity

GATED = """
import triton
import triton.language as tl

@triton.jit
def gated(x_ptr, g_ptr, out_ptr, T, H, D: tl.constexpr, BT: tl.constexpr):
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    h = tl.program_id(1)
    d = tl.arange(0, D)
    g = tl.load(g_ptr + t * H + h)
    x = tl.load(x_ptr + (t[:, None] * H + h) * D + d[None, :])
    tl.store(out_ptr + (t[:, None] * H + h) * D + d[None, :], x * g[:, None])
"""


def test_tl131_per_token_vector_beside_tiles_is_info() -> None:
    (f,) = of(GATED, "TL131")
    assert f.severity == Severity.INFO and "small share" in f.message


def test_tl131_column_walk_of_the_main_data_stays_a_warning() -> None:
    src = """
import triton
import triton.language as tl

@triton.jit
def column(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    col = tl.program_id(0)
    x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows)
    tl.store(out_ptr + col, tl.sum(x))
"""
    (f,) = of(src, "TL131")
    assert f.severity == Severity.WARNING
