"""Row sums over a masked load without `other`: the zero padding is what makes the sum right."""

import triton
import triton.language as tl


@triton.jit
def masked_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    scaled = x * 2.0
    tl.store(out_ptr + row, tl.sum(scaled, axis=0))
