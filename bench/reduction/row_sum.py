"""Sum of each row of a (M, N) fp32 matrix.

Known problems:
- line 27: tl.sum inside the column loop: a block reduction (and its shuffles) every iteration
- line 39: BLOCK_SIZE=128 for rows of thousands of elements: many short iterations
- line 22: the row offset is widened to int64
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 16, "N": 512}, {"M": 13, "N": 301}]


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_start = x_ptr + row.to(tl.int64) * stride_row
    acc = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_start + cols, mask=cols < n_cols, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + row, acc)


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
        row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=128)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
