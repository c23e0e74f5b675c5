"""Row-wise count of non-zero elements, fp32 input.

Computes torch.count_nonzero(x, dim=1) for x = relu(randn(N_ROWS, N_COLS)) fp32
(contiguous, row-major, about half of the entries exactly zero); output (N_ROWS,) int64.
One program per row loops over the columns in BLOCK_N chunks and sums (x != 0).

Benchmark shape: N_ROWS=16384, N_COLS=4096.

Known problems:
- L49-L51: one program per row with only 4 iterations of a 1024-wide chunk (16 KB per program); programs are short-lived, so launch/ramp-up and the tail of each program take a noticeable share, and there is no multi-row tiling per program.
- L36-L40: the loop body is a single load -> compare -> add with no unrolling or multiple loads in flight per thread, so memory-level parallelism per SM relies only on occupancy.
- L41-L42: every program ends with its own cross-warp tl.sum and a single scalar int64 store (16384 tiny uncoalesced writes); with fixed BLOCK_N = 1024 / num_warps = 4 (L49-L51) and no autotuning.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 16384
N_COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.count_nonzero(x, dim=1)


@triton.jit
def count_nonzero_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = x_ptr + row.to(tl.int64) * n_cols
    acc = tl.zeros((BLOCK_N,), dtype=tl.int32)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=0.0)
        acc += (x != 0.0).to(tl.int32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total.to(tl.int64))


def count_nonzero_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows,), device=x.device, dtype=torch.int64)
    BLOCK_N = 1024
    grid = (n_rows,)
    count_nonzero_rows_kernel[grid](x, out, n_cols, BLOCK_N=BLOCK_N, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return count_nonzero_rows(x)


def get_inputs():
    return [torch.relu(torch.randn(N_ROWS, N_COLS, dtype=torch.float32))]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 64, "N_COLS": 2048},
    {"N_ROWS": 300, "N_COLS": 1500},
]
