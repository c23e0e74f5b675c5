"""Pairwise gather out = x[rows, cols] from a 2-D fp16 tensor x (R, C) with int64 index vectors rows, cols (N,);
output fp16 (N,).

Known problems:
- gather_index_pairs_kernel: each lane gathers one 2-byte element from a random (row, col), so every load touches its own 32-byte sector and ~94% of the fetched bytes are wasted; inherent to random pair indices, and nothing (e.g. sorting the pairs for locality) is done about it.
- gather_index_pairs_kernel: rows and cols are read as int64 (8 B each) per 2-byte output element, and the 64-bit address arithmetic `rows * stride_r + cols * stride_c` is done per lane; the index traffic (16 MiB) dominates the useful output traffic (2 MiB).
- BLOCK = 1024 and num_warps = 4 are fixed guesses, not tuned (no autotune); one element per lane per program, no persistent loop.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

X_ROWS = 8192
X_COLS = 8192
N_IDX = 1048576


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, rows, cols):
        return x[rows, cols]


@triton.jit
def gather_index_pairs_kernel(x_ptr, rows_ptr, cols_ptr, out_ptr, N, stride_r, stride_c,
                              BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    r = tl.load(rows_ptr + offs, mask=mask, other=0).to(tl.int64)
    c = tl.load(cols_ptr + offs, mask=mask, other=0).to(tl.int64)
    vals = tl.load(x_ptr + r * stride_r + c * stride_c, mask=mask, other=0.0)
    tl.store(out_ptr + offs, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, rows, cols):
        N = rows.numel()
        out = torch.empty((N,), dtype=x.dtype, device=x.device)
        BLOCK = 1024
        grid = (triton.cdiv(N, BLOCK),)
        gather_index_pairs_kernel[grid](x, rows, cols, out, N, x.stride(0), x.stride(1),
                                        BLOCK=BLOCK, num_warps=4)
        return out


def get_inputs():
    x = torch.randn(X_ROWS, X_COLS, dtype=torch.float16)
    rows = torch.randint(0, X_ROWS, (N_IDX,), dtype=torch.int64)
    cols = torch.randint(0, X_COLS, (N_IDX,), dtype=torch.int64)
    return [x, rows, cols]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"X_ROWS": 64, "X_COLS": 128, "N_IDX": 4096},
    {"X_ROWS": 37, "X_COLS": 91, "N_IDX": 3001},
    {"X_ROWS": 1, "X_COLS": 5, "N_IDX": 17},
]
