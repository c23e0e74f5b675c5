"""Row-wise cumulative minimum: torch.cummin(x, dim=1).values for x (N_ROWS, N_COLS) fp32.

Known problems:
- Lines 42-44: one row per program with default num_warps=4 and no tuning; otherwise a straightforward memory-bound kernel (no major problem known).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 4096
N_COLS = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cummin(x, dim=1).values


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b)


@triton.jit
def cummin_rows_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("inf"))
    y = tl.associative_scan(x, 0, _min_combine)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


def cummin_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    cummin_rows_kernel[grid](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cummin_rows(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 64, "N_COLS": 256},
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 10, "N_COLS": 1000},
]
