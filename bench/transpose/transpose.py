"""Transpose of a (M, N) fp32 matrix into a contiguous (N, M) matrix.

Known problems:
- line 26: the stores walk a column of the output: stride M between lanes, no coalescing
- line 21: one program per input row with 1D blocks instead of 2D tiles
- line 38: BLOCK_SIZE=128 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 32, "N": 64}, {"M": 19, "N": 45}]


@triton.jit
def transpose_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(out_ptr + cols * n_rows + row, x, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return x.t().contiguous()


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape[1], x.shape[0], dtype=x.dtype, device=x.device)
        transpose_kernel[(x.shape[0],)](x, out, x.shape[0], x.shape[1], BLOCK_SIZE=128)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
