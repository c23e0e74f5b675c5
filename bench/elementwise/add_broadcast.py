"""out = x + row_bias[None, :] + col_bias[:, None] for a (M, N) fp32 matrix: broadcasting on both axes.

Known problems:
- line 24: row and column indices recovered from a flat offset with a division and a modulo per element
- lines 27,28: the broadcast vectors are gathered per element instead of loaded once per tile
- line 43: BLOCK_SIZE=1024 over a flat index: a 1D grid over a 2D problem
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 5, "N": 131}, {"M": 32, "N": 64}]


@triton.jit
def add_broadcast_kernel(x_ptr, rb_ptr, cb_ptr, out_ptr, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_rows * n_cols
    row = offs // n_cols
    col = offs % n_cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    rb = tl.load(rb_ptr + col, mask=mask, other=0.0)
    cb = tl.load(cb_ptr + row, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + rb + cb, mask=mask)


class Model(nn.Module):
    def forward(self, x, row_bias, col_bias):
        return x + row_bias[None, :] + col_bias[:, None]


class ModelNew(nn.Module):
    def forward(self, x, row_bias, col_bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        m, n = x.shape
        grid = (triton.cdiv(m * n, 1024),)
        add_broadcast_kernel[grid](x, row_bias, col_bias, out, m, n, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.randn(M, N), torch.randn(N), torch.randn(M)]


def get_init_inputs():
    return []
