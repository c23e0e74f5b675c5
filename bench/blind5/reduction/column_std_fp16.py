"""Column-wise standard deviation (unbiased), fp16.

Computes x.std(dim=0) (correction=1) for x of shape (N_ROWS, N_COLS) fp16 (contiguous,
row-major); output (N_COLS,) fp16. Sums are accumulated in fp32.
Each program owns BLOCK_N columns and walks down all rows in BLOCK_M chunks, accumulating
sum and sum of squares in fp32; var = (sumsq - sum^2 / n) / (n - 1), std = sqrt(var).

Benchmark shape: N_ROWS=16384, N_COLS=2048.

Known problems:
- L60-L63: the grid is only cdiv(N_COLS, BLOCK_N) = 32 programs for the benchmark shape, a quarter of the 132 SMs of an H200, and each walks all 16384 rows serially; there is no split over rows (partial sums + a second pass), so the kernel is latency-bound far below HBM bandwidth.
- L41-L45: small 32 x 64 fp16 tiles (128 bytes per row segment) per iteration, so each SM has little memory in flight; wider column blocks / more rows per step would be needed.
- L46-L47: the per-iteration tl.sum over axis 0 reduces across threads every step; keeping elementwise (BLOCK_M, BLOCK_N) accumulators and reducing once after the loop would avoid the repeated cross-warp reductions.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 16384
N_COLS = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.std(dim=0)


@triton.jit
def column_std_kernel(x_ptr, out_ptr, n_rows, n_cols,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_c = cols < n_cols

    s = tl.zeros((BLOCK_N,), dtype=tl.float32)
    sq = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = (rows < n_rows)[:, None] & mask_c[None, :]
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask,
                    other=0.0).to(tl.float32)
        s += tl.sum(x, axis=0)
        sq += tl.sum(x * x, axis=0)

    mean = s / n_rows
    var = (sq - s * mean) / (n_rows - 1)
    var = tl.maximum(var, 0.0)
    std = tl.sqrt(var)
    tl.store(out_ptr + cols, std.to(tl.float16), mask=mask_c)


def column_std(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_cols,), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N = 32, 64
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    column_std_kernel[grid](x, out, n_rows, n_cols,
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return column_std(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 256, "N_COLS": 64},
    {"N_ROWS": 1000, "N_COLS": 300},
]
