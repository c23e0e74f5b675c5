"""Exponential moving average along dim 1 (row-wise linear recurrence).

y[:, 0] = x[:, 0]; y[:, t] = 0.9 * y[:, t-1] + 0.1 * x[:, t] for x (N_ROWS, N_COLS) fp32.
Output fp32 (N_ROWS, N_COLS).

Benchmark shape: N_ROWS=2048, N_COLS=1024 (fp32).

Known problems:
- L47-L50: the recurrence is done as a serial loop over all N_COLS columns (1024 dependent steps per program) instead of a parallel (associative) scan along the row.
- L48-L50: each step loads/stores one column for BLOCK_ROWS rows, i.e. a strided access with stride N_COLS: every element touches its own 32B sector, so the loads/stores are uncoalesced and waste most of the bandwidth.
- L58-L59: BLOCK_ROWS=32 gives only 2048/32=64 programs, fewer than the 132 SMs, and a 32-element block uses just one warp's worth of work per program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 2048
N_COLS = 1024

ALPHA = 0.9
BETA = 0.1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        ys = [x[:, 0]]
        y = x[:, 0]
        for t in range(1, x.shape[1]):
            y = ALPHA * y + BETA * x[:, t]
            ys.append(y)
        return torch.stack(ys, dim=1)


@triton.jit
def ema_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK_ROWS: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    rmask = rows < n_rows
    x_row = x_ptr + rows * stride_x
    y_row = y_ptr + rows * stride_y
    acc = tl.load(x_row, mask=rmask, other=0.0)
    tl.store(y_row, acc, mask=rmask)
    for t in range(1, n_cols):
        xt = tl.load(x_row + t, mask=rmask, other=0.0)
        acc = 0.9 * acc + 0.1 * xt
        tl.store(y_row + t, acc, mask=rmask)


def ema_rows(x):
    assert x.dim() == 2
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_ROWS = 32
    grid = (triton.cdiv(n_rows, BLOCK_ROWS),)
    ema_rows_kernel[grid](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK_ROWS=BLOCK_ROWS)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ema_rows(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 64, "N_COLS": 64},
    {"N_ROWS": 5, "N_COLS": 300},
]
