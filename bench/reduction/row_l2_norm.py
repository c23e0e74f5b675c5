"""Euclidean norm of each row of a (M, N) fp16 matrix, fp32 accumulation and fp32 output.

Known problems:
- line 21: one program per row with the whole row in one block: BLOCK_SIZE = next power of two of N
- line 36: num_warps left at 4 for a 8192-wide block: many registers per thread
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 8192
TEST_SHAPES = [{"M": 5, "N": 300}, {"M": 12, "N": 512}]


@triton.jit
def row_l2_norm_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))


class Model(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x.float(), dim=1)


class ModelNew(nn.Module):
    def forward(self, x):
        m, n = x.shape
        out = torch.empty(m, dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(n)
        row_l2_norm_kernel[(m,)](x, out, n, x.stride(0), BLOCK_SIZE=block)
        return out


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []
