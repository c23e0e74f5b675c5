"""RMSNorm over the last dimension of a (M, N) fp32 matrix, with weight.

Known problems:
- lines 28-38: two passes over every row (sum of squares, then normalize)
- line 31: tl.sum inside the column loop: a block reduction every iteration
- line 38: per-element division by the RMS instead of a multiply by its reciprocal
- line 24: the row offset is widened to int64
- line 54: BLOCK_SIZE=128 for rows of thousands of elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-6
TEST_SHAPES = [{"M": 16, "N": 512}, {"M": 11, "N": 250}]


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_row, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    out_row = out_ptr + row * stride_row
    sq = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        sq += tl.sum(x * x, axis=0)
    rms = tl.sqrt(sq / n_cols + eps)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_row + cols, x / rms * w, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.weight = nn.Parameter(torch.randn(N))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + EPS) * self.weight


class ModelNew(Model):
    def forward(self, x):
        out = torch.empty_like(x)
        rmsnorm_kernel[(x.shape[0],)](x, self.weight, out, x.shape[1], x.stride(0), EPS, BLOCK_SIZE=128)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
