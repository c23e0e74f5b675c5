"""Column max: y[n] = max over m of x[m, n] for an (M, N) fp32 matrix (x.max(dim=0).values).

Known problems:
- lines 49-52: grid is cdiv(N, BLOCK_N) = 32 programs for N=2048, a quarter of the H200's 132 SMs; the row axis is never split across programs (no split-M partial maxima)
- lines 36-41: each program walks all 16384 rows serially with one 32x64 tile (8 KB) in flight per iteration, so the kernel is latency bound, far from HBM bandwidth
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 2048

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 257, "N": 33},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.max(dim=0).values


@triton.jit
def column_max_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_m,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & col_mask[None, :]
        ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :]
        vals = tl.load(ptrs, mask=mask, other=float("-inf"))
        acc = tl.maximum(acc, vals)
    tl.store(y_ptr + cols, tl.max(acc, axis=0), mask=col_mask)


def column_max(x):
    assert x.dim() == 2 and x.stride(1) == 1
    n_rows, n_cols = x.shape
    y = torch.empty(n_cols, device=x.device, dtype=x.dtype)
    BLOCK_M = 32
    BLOCK_N = 64
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    column_max_kernel[grid](x, y, n_rows, n_cols, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return column_max(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
