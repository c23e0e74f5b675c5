"""Inclusive cumulative product along the last dimension of a (M, N) fp32 matrix (values near 1).

Known problems:
- lines 22-24: a sequential scalar loop per row: one element per iteration, one scalar load and store each
- line 35: one single-lane program per row: the device is almost idle
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
TEST_SHAPES = [{"M": 5, "N": 77}, {"M": 8, "N": 64}]


@triton.jit
def cumprod_kernel(x_ptr, out_ptr, n_cols, stride_row):
    row = tl.program_id(0)
    acc = 1.0
    for i in range(0, n_cols):
        acc *= tl.load(x_ptr + row * stride_row + i)
        tl.store(out_ptr + row * stride_row + i, acc)


class Model(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        cumprod_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0))
        return out


def get_inputs():
    return [1.0 + 0.001 * torch.randn(M, N)]


def get_init_inputs():
    return []
