"""logcumsumexp along the last dimension of a (M, N) fp32 matrix.

Known problems:
- lines 25-34: chunks of BLOCK_SIZE scanned with tl.cumsum of exp relative to a running maximum, the carry
  rescaled per chunk: exp and log for every element, a sequential chunk loop per row
- line 32: log of a prefix sum per element
- line 45: one program per row with BLOCK_SIZE=256
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
TEST_SHAPES = [{"M": 5, "N": 300}, {"M": 8, "N": 256}]


@triton.jit
def logcumsumexp_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    run_max = -float("inf")
    carry = 0.0  # sum of exp(x - run_max) over the elements already scanned
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
        new_max = tl.maximum(run_max, tl.max(x, axis=0))
        carry = carry * tl.exp(run_max - new_max)
        prefix = carry + tl.cumsum(tl.exp(x - new_max), axis=0)
        tl.store(out_ptr + row * stride_row + cols, new_max + tl.log(prefix), mask=mask)
        carry = tl.max(tl.where(mask, prefix, 0.0), axis=0)
        run_max = new_max


class Model(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        logcumsumexp_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=256)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
