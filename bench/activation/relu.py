"""ReLU of a (M, N) fp16 matrix (64M elements).

Known problems:
- line 21: one program per row, the row in BLOCK_SIZE chunks: rows shorter than the grid's parallelism hide nothing
- line 25: the fp16 input is widened to fp32 for a max with zero
- line 38: BLOCK_SIZE=256 for rows of 8192 elements: 32 loop iterations per program
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 4, "N": 300}, {"M": 9, "N": 1000}]


@triton.jit
def relu_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.maximum(x, 0.0)
        tl.store(out_ptr + row * stride_row + cols, y.to(tl.float16), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=256)
        return out


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []
