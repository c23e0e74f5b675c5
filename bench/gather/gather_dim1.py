"""torch.gather along dim 1: out[i, j] = x[i, index[i, j]] for x (M, N) fp32 and int64 index (M, K).

Known problems:
- line 26: int64 indices loaded and used in 64-bit address arithmetic per element
- line 27: a data-dependent gather within the row: uncoalesced reads
- line 41: one program per row with BLOCK_SIZE=128 for 2048 outputs per row
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096
K = 2048
TEST_SHAPES = [{"M": 5, "N": 77, "K": 30}, {"M": 8, "N": 128, "K": 64}]


@triton.jit
def gather_kernel(x_ptr, index_ptr, out_ptr, k, stride_x, stride_idx, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, k, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < k
        idx = tl.load(index_ptr + row * stride_idx + cols, mask=mask, other=0)
        v = tl.load(x_ptr + row * stride_x + idx, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride_idx + cols, v, mask=mask)


class Model(nn.Module):
    def forward(self, x, index):
        return torch.gather(x, 1, index)


class ModelNew(nn.Module):
    def forward(self, x, index):
        m, k = index.shape
        index = index.contiguous()
        out = torch.empty(m, k, dtype=x.dtype, device=x.device)
        gather_kernel[(m,)](x, index, out, k, x.stride(0), index.stride(0), BLOCK_SIZE=128)
        return out


def get_inputs():
    return [torch.randn(M, N), torch.randint(0, N, (M, K))]


def get_init_inputs():
    return []
