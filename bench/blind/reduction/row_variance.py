"""Row variance: y[m] = unbiased variance over n of x[m, n] for an (M, N) fp32 matrix (x.var(dim=-1)).

Known problems:
- lines 34-36 and 40-45: two passes over every row (mean, then squared deviations) load each 16 KB row twice; the row fits in registers at N=4096 (or a one-pass Welford/shifted-sum would do), so half of the load traffic is redundant
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 5, "N": 2100},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.var(dim=-1)


@triton.jit
def row_var_kernel(x_ptr, y_ptr, n_cols, stride_m, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride_m
    # pass 1: mean
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    # pass 2: sum of squared deviations
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(base + offs, mask=mask, other=0.0)
        d = tl.where(mask, v - mean, 0.0)
        acc2 += d * d
    var = tl.sum(acc2, axis=0) / (n_cols - 1)
    tl.store(y_ptr + row, var)


def row_variance(x):
    assert x.dim() == 2 and x.stride(1) == 1
    n_rows, n_cols = x.shape
    y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
    BLOCK = 1024
    row_var_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_variance(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
