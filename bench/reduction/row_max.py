"""Maximum of each row of a (M, N) fp32 matrix.

Known problems:
- lines 22-25: the row in 256-wide chunks with a block reduction per chunk
- line 37: one program per row with BLOCK_SIZE=256 for rows of 16384 elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 16384
TEST_SHAPES = [{"M": 6, "N": 700}, {"M": 16, "N": 256}]


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    acc = -float("inf")
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=-float("inf"))
        acc = tl.maximum(acc, tl.max(x, axis=0))
    tl.store(out_ptr + row, acc)


class Model(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
        row_max_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=256)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
