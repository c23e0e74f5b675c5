"""Sum over the rows of a (M, N) fp32 matrix (a column reduction): out[j] = sum_i x[i, j].

Known problems:
- line 20: one program per column: N programs that each read one scalar per row
- lines 22-23: a scalar loop over the rows; every load is a single strided element (no coalescing)
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 8192
TEST_SHAPES = [{"M": 32, "N": 64}, {"M": 37, "N": 19}]


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, n_rows, stride_row):
    col = tl.program_id(0)
    acc = 0.0
    for row in range(0, n_rows):
        acc += tl.load(x_ptr + row * stride_row + col)
    tl.store(out_ptr + col, acc)


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[1], dtype=x.dtype, device=x.device)
        column_sum_kernel[(x.shape[1],)](x, out, x.shape[0], x.stride(0))
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
