"""out[i, j] = sum_{k <= i} x[k, j]  (torch.cumsum(x, dim=0), a scan down the columns); x (M, N) fp32, out (M, N) fp32.

One program per BLOCK_N-wide strip of columns. The program walks down the rows in BLOCK_M x BLOCK_N tiles: each
tile is scanned along axis 0 with tl.cumsum, offset by the running column sums of all previous tiles and stored;
the running column sums are then updated with tl.sum of the tile.

Known problems:
- lines 41-42: the grid is only cdiv(N, 32) = 128 programs of 4 warps for 132 SMs, each walking all 4096 rows serially (128 dependent iterations): the GPU is almost idle. Splitting M into segments (per-segment column sums, then a second pass, or a decoupled look-back) is needed for parallelism.
- lines 27-33: the tile loop is serial with no prefetch of the next tile, and each 32 x 32 tile row is only 128 bytes, so little memory traffic is in flight per program.
- line 34: redundant column reduction per tile; the new carry is the last row of s.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 4096
COLS = 4096


@triton.jit
def cumsum_dim0_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    carry = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        offs = rows[:, None] * N + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        s = tl.cumsum(x, axis=0) + carry[None, :]
        tl.store(out_ptr + offs, s, mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum_dim0(x):
    M, N = x.shape
    out = torch.empty_like(x)
    BLOCK_M = 32
    BLOCK_N = 32
    grid = (triton.cdiv(N, BLOCK_N),)
    cumsum_dim0_kernel[grid](x, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum_dim0(x)


def get_inputs():
    x = torch.randn(ROWS, COLS)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 71, "COLS": 37},
    {"ROWS": 129, "COLS": 65},
    {"ROWS": 257, "COLS": 45},
]
