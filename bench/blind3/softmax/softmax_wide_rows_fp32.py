"""Row softmax over very wide rows: y = torch.softmax(x, dim=-1), x and y (M, 65536) fp32.

A row (256 KB) is larger than one block, so each program loops over its row in BLOCK_N chunks.

Known problems:
- L27-L45: three passes over each 256 KB row, each reading it from global memory (L29, L36, L43); with all 512 rows in flight the working set (128 MB) exceeds L2, so traffic is 3 reads + 1 write versus the minimum 1 + 1 (an online max/sum would fuse the first two passes).
- L65: one program per row gives only M = 512 programs (about 4 per SM), each looping serially over 64 chunks three times; no split of a row across programs, limited latency hiding.
- L37, L44: exp is computed twice per element (sum pass and output pass), and L44 divides per element instead of multiplying by a reciprocal; L64 BLOCK_N = 1024 and default num_warps are untuned.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 512
N_COLS = 65536


@triton.jit
def softmax_wide_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    # pass 1: row max
    acc_max = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        acc_max = tl.maximum(acc_max, x)
    row_max = tl.max(acc_max, axis=0)
    # pass 2: sum of exp
    acc_sum = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        acc_sum += tl.exp(x - row_max)
    row_sum = tl.sum(acc_sum, axis=0)
    # pass 3: normalise and write
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_row + cols, y, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_N = 1024
        softmax_wide_kernel[(m,)](x, y, n, x.stride(0), y.stride(0), BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N_COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"M": 4, "N_COLS": 4096}, {"M": 3, "N_COLS": 5000}]
