"""Row reductions: a sum over a row, and a column sum that strides through memory."""

import triton
import triton.language as tl


# tritonlens: N=1024
@triton.jit
def row_sum(x_ptr, out_ptr, stride_row, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * stride_row + cols)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


# tritonlens: BLOCK_M=64, BLOCK_N=64
@triton.jit
def col_sum(x_ptr, out_ptr, M, stride_row, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m in range(0, M, BLOCK_M):
        rows = m + tl.arange(0, BLOCK_M)
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=rows[:, None] < M, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc)
