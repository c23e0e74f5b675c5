"""LayerNorm over the last dimension of a (M, N) fp32 matrix, with weight and bias.

Known problems:
- lines 28-48: three passes over every row (mean, variance, normalize): the row is read three times
- lines 31, 39: tl.sum inside the column loops: a block reduction every iteration
- line 48: per-element division by the standard deviation instead of a multiply by its reciprocal
- line 66: BLOCK_SIZE=256 for rows of thousands of elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-5
TEST_SHAPES = [{"M": 16, "N": 512}, {"M": 9, "N": 333}]


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_row, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    out_row = out_ptr + row * stride_row
    # pass 1: mean
    total = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        total += tl.sum(x, axis=0)
    mean = total / n_cols
    # pass 2: variance
    sq = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        sq += tl.sum(d * d, axis=0)
    std = tl.sqrt(sq / n_cols + eps)
    # pass 3: normalize
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(out_row + cols, (x - mean) / std * w + b, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.weight = nn.Parameter(torch.randn(N))
        self.bias = nn.Parameter(torch.randn(N))

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (x.shape[1],), self.weight, self.bias, EPS)


class ModelNew(Model):
    def forward(self, x):
        out = torch.empty_like(x)
        layernorm_kernel[(x.shape[0],)](
            x, self.weight, self.bias, out, x.shape[1], x.stride(0), EPS, BLOCK_SIZE=256
        )
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
