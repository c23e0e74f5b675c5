"""(x * x).sum(dim=0) of a 2-D fp32 tensor x (M, N); output fp32 (N,).

Known problems:
- sum_squares_dim0_kernel grid (ModelNew.forward, `grid = (triton.cdiv(N, BLOCK_N),)`): only N / BLOCK_N = 32 programs for N = 2048, far fewer than the SMs of an H200; the 16384-row reduction dim is not split across programs (no split-M + second pass / atomics), so each program streams 16384 * 64 * 4 B = 4 MiB serially and the GPU is mostly idle.
- BLOCK_M / BLOCK_N = 32 / 64 and num_warps = 4 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M_ROWS = 16384
N_COLS = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x * x).sum(dim=0)


@triton.jit
def sum_squares_dim0_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride_m + cols[None, :] * stride_n
        x = tl.load(ptrs, mask=mask, other=0.0)
        acc += x * x
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, total, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((N,), dtype=torch.float32, device=x.device)
        BLOCK_M = 32
        BLOCK_N = 64
        grid = (triton.cdiv(N, BLOCK_N),)
        sum_squares_dim0_kernel[grid](x, out, M, N, x.stride(0), x.stride(1),
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        return out


def get_inputs():
    x = torch.randn(M_ROWS, N_COLS, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M_ROWS": 256, "N_COLS": 128},
    {"M_ROWS": 301, "N_COLS": 77},
    {"M_ROWS": 3, "N_COLS": 200},
]
