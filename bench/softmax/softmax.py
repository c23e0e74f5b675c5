"""Softmax over the last dimension of a (M, N) fp32 matrix.

Known problems:
- lines 25-39: three passes over every row (max, normalizer, output): the row is read three times
- lines 28, 33: tl.max / tl.sum inside the column loops: a block reduction every iteration
- line 39: per-element division by the normalizer instead of a multiply by its reciprocal
- line 50: BLOCK_SIZE=128 for rows of thousands of elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 16, "N": 512}, {"M": 7, "N": 389}]


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    row_max = -float("inf")
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        row_max = tl.maximum(row_max, tl.max(x, axis=0))
    denom = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        denom += tl.sum(tl.exp(x - row_max), axis=0)
    out_row = out_ptr + row * stride_row
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
        tl.store(out_row + cols, tl.exp(x - row_max) / denom, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=128)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
