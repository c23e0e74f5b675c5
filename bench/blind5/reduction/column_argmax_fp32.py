"""Column-wise argmax, fp32.

Computes torch.argmax(x, dim=0) for x of shape (N_ROWS, N_COLS) fp32 (contiguous, row-major);
output (N_COLS,) int64, the row index of the maximum of every column (first index on ties).
Each program owns BLOCK_N columns and walks down all rows in BLOCK_M chunks, keeping a running
max value and index per column.

Benchmark shape: N_ROWS=8192, N_COLS=4096.

Known problems:
- L58-L61: the grid is only cdiv(N_COLS, BLOCK_N) = 64 programs for the benchmark shape, fewer than the 132 SMs of an H200, and each one walks all 8192 rows serially; there is no split over rows (two-stage reduction), so most of the GPU idles and the kernel is far from memory bandwidth.
- L41-L45: small 32 x 64 tiles per iteration (each row segment is only 256 bytes) with no unrolling or prefetch depth, so each SM keeps too few bytes in flight to hide DRAM latency.
- L46-L49: a full tl.max(..., return_indices=True) tree reduction over the tile every iteration plus two tl.where selects, instead of keeping a per-element running (value, index) pair and reducing once at the end.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=0)


@triton.jit
def column_argmax_kernel(x_ptr, out_ptr, n_rows, n_cols,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_c = cols < n_cols

    best_val = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for r0 in range(0, n_rows, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        mask = (rows < n_rows)[:, None] & mask_c[None, :]
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask,
                    other=float("-inf"))
        blk_max, blk_idx = tl.max(x, axis=0, return_indices=True)
        upd = blk_max > best_val
        best_val = tl.where(upd, blk_max, best_val)
        best_idx = tl.where(upd, blk_idx + r0, best_idx)

    tl.store(out_ptr + cols, best_idx.to(tl.int64), mask=mask_c)


def column_argmax(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_cols,), device=x.device, dtype=torch.int64)
    BLOCK_M, BLOCK_N = 32, 64
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    column_argmax_kernel[grid](x, out, n_rows, n_cols,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return column_argmax(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 256, "N_COLS": 64},
    {"N_ROWS": 1000, "N_COLS": 300},
]
