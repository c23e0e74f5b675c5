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


# Held-out misreadings (docs/precision.md, "Held-out files"): a row index recovered through other locals, and a
# stride of one tensor taken from another tensor whose name ends with the first one's name.
FLAT_CHUNK = """
import triton
import triton.language as tl

@triton.jit
def amax_chunk(x_ptr, out_ptr, n, D, stride_s, stride_d, BLOCK: tl.constexpr):
    s_start = tl.program_id(0) * 64
    acc = 0.0
    for block_start in range(0, n, BLOCK):
        offs = block_start + tl.arange(0, BLOCK)
        local_s = offs // D
        d_idx = offs % D
        s_idx = s_start + local_s
        x = tl.load(x_ptr + s_idx * stride_s + d_idx * stride_d, mask=offs < n)
        acc = tl.maximum(acc, tl.max(tl.abs(x)))
    tl.store(out_ptr + tl.program_id(0), acc)

def launch(x, out):
    amax_chunk[(4,)](x, out, x.numel(), x.shape[1], x.stride(0), x.stride(1), BLOCK=1024)
"""


def test_tl131_silent_when_the_row_index_is_recovered_through_other_locals() -> None:
    assert not of(FLAT_CHUNK, "TL131")
    # the same access with lanes really walking rows (no division on the way) is still a column walk
    column = FLAT_CHUNK.replace("local_s = offs // D", "local_s = offs").replace("d_idx = offs % D", "d_idx = 0")
    (f,) = of(column, "TL131")
    assert f.data["row_length"] == "stride_s"


def test_tl131_scalar_division_far_away_does_not_hide_a_column_walk() -> None:
    scalar = COLUMN.replace("    col = tl.program_id(0)\n", "    col = tl.program_id(0) // 2\n    base = col * 0\n").replace(
        "rows = tl.arange(0, BLOCK)", "rows = base + tl.arange(0, BLOCK)"
    )
    assert "base + tl.arange" in scalar
    assert len(of(scalar, "TL131")) == 1


def test_tl131_a_stride_of_another_tensor_is_not_an_outer_stride() -> None:
    vector = """
    import triton
    import triton.language as tl

    @triton.jit
    def scale_heads(A_ptr, ddA_ptr, out_ptr, nheads, stride_A_head, stride_ddA_head, stride_ddA_c, BH: tl.constexpr):
        offs_h = tl.arange(0, BH)
        a = tl.load(A_ptr + offs_h * stride_A_head, mask=offs_h < nheads)
        d = tl.load(ddA_ptr + offs_h * stride_ddA_head, mask=offs_h < nheads)
        tl.store(out_ptr + offs_h, a * d, mask=offs_h < nheads)

    def launch(A, ddA, out):
        scale_heads[(1,)](A, ddA, out, A.shape[0], A.stride(0), ddA.stride(0), ddA.stride(2), BH=32)
    """
    assert not [f for f in of(vector, "TL131") if f.data["row_length"] == "stride_A_head"]
