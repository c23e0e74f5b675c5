"""torch.argmin(x, dim=0) of a 2-D fp16 tensor x (M, N); output int64 (N,).

Ties pick the first (smallest) row index, like torch.

Known problems:
- argmin_dim0_kernel grid (ModelNew.forward, `grid = (triton.cdiv(N, BLOCK_N),)`): only N / BLOCK_N = 64 programs for N = 4096, so fewer programs than SMs on an H200; dim 0 (8192 rows) is not split across programs, each program walks all M rows serially.
- argmin_dim0_kernel loop body: tl.min and tl.argmin are two separate reductions over the same [BLOCK_M, BLOCK_N] tile, plus the per-tile compare/select merge with the running state; a single fused (value, index) reduction would do less work.
- argmin_dim0_kernel: the fp16 tile is upcast to fp32 (`.to(tl.float32)`) before comparing, doubling register use for no accuracy gain (the compare is exact in fp16).
- BLOCK_M / BLOCK_N = 64 / 64 and num_warps are fixed guesses, not tuned (no autotune); each row segment is only 64 * 2 = 128 bytes per program per row.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M_ROWS = 8192
N_COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmin(x, dim=0)


@triton.jit
def argmin_dim0_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    best_val = tl.full([BLOCK_N], float("inf"), tl.float32)
    best_idx = tl.zeros([BLOCK_N], dtype=tl.int32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride_m + cols[None, :] * stride_n
        x = tl.load(ptrs, mask=mask, other=float("inf")).to(tl.float32)
        blk_val = tl.min(x, axis=0)
        blk_idx = tl.argmin(x, axis=0, tie_break_left=True) + m0
        # strict < keeps the earlier index on ties across tiles
        better = blk_val < best_val
        best_val = tl.where(better, blk_val, best_val)
        best_idx = tl.where(better, blk_idx, best_idx)
    tl.store(out_ptr + cols, best_idx.to(tl.int64), mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((N,), dtype=torch.int64, device=x.device)
        BLOCK_M = 64
        BLOCK_N = 64
        grid = (triton.cdiv(N, BLOCK_N),)
        argmin_dim0_kernel[grid](x, out, M, N, x.stride(0), x.stride(1),
                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        return out


def get_inputs():
    x = torch.randn(M_ROWS, N_COLS, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M_ROWS": 128, "N_COLS": 64},
    {"M_ROWS": 157, "N_COLS": 93},
    {"M_ROWS": 5, "N_COLS": 130},
]
