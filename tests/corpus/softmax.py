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
