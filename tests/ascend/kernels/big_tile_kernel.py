"""A 2-D tile large enough to overflow the Unified Buffer once double-buffered."""

import triton
import triton.language as tl


@triton.jit
def big_tile_kernel(x_ptr, y_ptr, out_ptr, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    ptrs = rm[:, None] * stride + rn[None, :]
    x = tl.load(x_ptr + ptrs)
    y = tl.load(y_ptr + ptrs)
    tl.store(out_ptr + ptrs, x * y + x)
