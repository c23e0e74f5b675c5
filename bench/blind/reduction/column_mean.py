"""Column mean: y[n] = mean over m of x[m, n] for an (M, N) fp32 matrix (x.mean(dim=0)).

Known problems:
- lines 49-52: grid is cdiv(N, BLOCK_N) = 64 programs for N=4096, fewer than the H200's 132 SMs; the row axis is never split across programs (no split-M partial sums), so most of the GPU idles
- lines 36-40: each program walks all M rows serially with one 32x64 tile (8 KB) in flight per iteration, so the few active programs are latency bound, far from HBM bandwidth
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 300, "N": 64},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=0)


@triton.jit
def column_mean_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_m,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & col_mask[None, :]
        ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + cols, total / n_rows, mask=col_mask)


def column_mean(x):
    assert x.dim() == 2 and x.stride(1) == 1
    n_rows, n_cols = x.shape
    y = torch.empty(n_cols, device=x.device, dtype=x.dtype)
    BLOCK_M = 32
    BLOCK_N = 64
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    column_mean_kernel[grid](x, y, n_rows, n_cols, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return column_mean(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
