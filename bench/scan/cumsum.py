"""Inclusive prefix sum along the last dimension of a (M, N) fp32 matrix.

Known problems:
- lines 24-27: a sequential scalar scan: one element per iteration, one scalar load and store each
- line 20: one program per row, each a single-lane scalar loop: the device is almost idle
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
TEST_SHAPES = [{"M": 8, "N": 64}, {"M": 5, "N": 77}]


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, stride_row):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    out_row = out_ptr + row * stride_row
    acc = 0.0
    for i in range(0, n_cols):
        x = tl.load(x_row + i)
        acc += x
        tl.store(out_row + i, acc)


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        cumsum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0))
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
