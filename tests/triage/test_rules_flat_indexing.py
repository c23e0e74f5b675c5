"""TL130 (2-D indices from per-element division) and TL131 (column access by a runtime row length)."""

from __future__ import annotations

from triage_helpers import locate, of

BIAS = """
import triton
import triton.language as tl

@triton.jit
def add_bias(x_ptr, b_ptr, out_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    row = offs // n_cols
    col = offs % n_cols
    x = tl.load(x_ptr + row * n_cols + col, mask=mask)
    b = tl.load(b_ptr + col, mask=mask)
    tl.store(out_ptr + offs, x + b, mask=mask)
"""


def test_tl130_fires_on_division_and_modulo_by_the_row_length() -> None:
    (f,) = of(BIAS, "TL130")
    assert f.span == locate(BIAS, "offs // n_cols")
    assert f.data == {"function_kind": "kernel", "divisor": "n_cols", "modulo": True}


def test_tl130_silent_for_wrapping_scalars_constexpr_and_2d_blocks() -> None:
    wrap = """
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, M, N, num_pid_n, BLOCK_M: tl.constexpr):
        pid = tl.program_id(0)
        pid_m = pid // num_pid_n
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        tl.store(a_ptr + offs_am, 1.0)
    """
    assert not of(wrap, "TL130")
    constexpr = BIAS.replace("n_cols, BLOCK", "n_cols: tl.constexpr, BLOCK")
    assert not of(constexpr, "TL130")


COLUMN = """
import triton
import triton.language as tl

@triton.jit
def col_sum(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0)
    tl.store(out_ptr + col, tl.sum(x, axis=0))
"""


def test_tl131_fires_when_lanes_walk_a_column() -> None:
    (f,) = of(COLUMN, "TL131")
    assert f.span == locate(COLUMN, "rows * n_cols")
    assert f.data["row_length"] == "n_cols"


def test_tl131_silent_for_row_access_and_stride_arguments() -> None:
    rows = COLUMN.replace("rows * n_cols + col", "col * n_cols + rows")
    assert not of(rows, "TL131")
    # A stride argument may be 1 (Triton specializes it): TL109's business, not a row length.
    strided = COLUMN.replace("n_cols, BLOCK", "n_cols, stride_r, BLOCK").replace(
        "rows * n_cols", "rows * stride_r"
    )
    assert not of(strided, "TL131")
    two_d = """
    import triton
    import triton.language as tl

    @triton.jit
    def copy(x_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
        r = tl.arange(0, BM)
        c = tl.arange(0, BN)
        mask = (r[:, None] < n_rows) & (c[None, :] < n_cols)
        x = tl.load(x_ptr + r[:, None] * n_cols + c[None, :], mask=mask)
        tl.store(x_ptr + r[:, None] * n_cols + c[None, :], x, mask=mask)
    """
    assert not of(two_d, "TL131")
    # A column-major 2-D tile: r is contiguous, and Triton's coalescing pass lays the tile out along it.
    assert not of(two_d.replace("r[:, None] * n_cols + c[None, :]", "c[None, :] * n_rows + r[:, None]"), "TL131")
    # A recovered index (`head * size + i % size`) and a diagonal (`rows * n + rows`) are not a column walk.
    recovered = COLUMN.replace(
        "    x = tl.load(x_ptr + rows * n_cols + col,",
        "    h = rows // n_cols\n    o = rows % n_cols\n    x = tl.load(x_ptr + h * n_cols + o,",
    )
    assert "h * n_cols" in recovered
    assert not of(recovered, "TL131")
