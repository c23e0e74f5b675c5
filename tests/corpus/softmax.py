"""Row softmax: a fused one-pass version and a naive one that reloads the row and divides precisely."""

import triton
import triton.language as tl


# tritonlens: BLOCK=1024
@triton.jit
def softmax_good(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_row + cols, num / den, mask=mask)


# tritonlens: BLOCK=1024
@triton.jit
def softmax_naive(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    row_max = tl.max(tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf")), axis=0)
    x = tl.load(x_ptr + cols + row * stride_row, mask=mask, other=-float("inf"))
    num = tl.exp(x - row_max)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_row + cols, tl.math.div_rn(num, den), mask=mask)


# tritonlens: BLOCK=256
@triton.jit
def softmax_multipass(x_ptr, out_ptr, scale_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    # Three sibling loops that reuse the names `start`, `cols`, `x`: MLIR prints the same SSA names in each.
    row = tl.program_id(0)
    row_x = x_ptr + row * stride_row
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row_x + cols, mask=cols < n_cols, other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    den = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row_x + cols, mask=cols < n_cols, other=-float("inf"))
        den += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = (start + tl.arange(0, BLOCK)).to(tl.int64)
        scale = tl.load(scale_ptr)
        x = tl.load(row_x + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * stride_row + cols, tl.exp(x - m) / den * scale, mask=cols < n_cols)
