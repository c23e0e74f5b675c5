"""Log-softmax over the last dimension of a (M, N) fp32 matrix.

Known problems:
- line 22: one program per row with the whole row in one block (next power of two of N)
- line 26: log(sum(exp)) recomputed from the shifted values: exp computed for every element only to be summed
- line 39: num_warps left at 4 for blocks of 8192 elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 8192
TEST_SHAPES = [{"M": 7, "N": 389}, {"M": 16, "N": 256}]


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    log_denom = tl.log(tl.sum(tl.exp(shifted), axis=0))
    tl.store(out_ptr + row * stride_row + cols, shifted - log_denom, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        m, n = x.shape
        log_softmax_kernel[(m,)](x, out, n, x.stride(0), BLOCK_SIZE=triton.next_power_of_2(n))
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
