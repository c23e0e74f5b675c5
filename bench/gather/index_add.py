"""index_add along dim 0 with alpha: out = x.index_add(0, index, src, alpha=ALPHA) for x (R, D) fp32,
src (K, D) fp32 and int64 row indices (K,) into R rows (duplicates allowed).

Known problems:
- line 39: x cloned into the output by torch first: a full extra read and write of the table
- line 29: atomic adds per element (indices can repeat)
- line 25: a 2D grid of (row, 32-column block): BLOCK_D=32 for rows of 256
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

R = 262144
D = 256
K = 262144
ALPHA = 0.5
TEST_SHAPES = [{"R": 10, "D": 40, "K": 23}, {"R": 16, "D": 64, "K": 32}]


@triton.jit
def index_add_kernel(src_ptr, index_ptr, out_ptr, d, alpha, BLOCK_D: tl.constexpr):
    k = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < d
    dst = tl.load(index_ptr + k)
    x = tl.load(src_ptr + k * d + cols, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + dst * d + cols, x * alpha, mask=mask)


class Model(nn.Module):
    def forward(self, x, index, src):
        return x.index_add(0, index, src, alpha=ALPHA)


class ModelNew(nn.Module):
    def forward(self, x, index, src):
        out = x.clone()
        k, d = src.shape
        index_add_kernel[(k, triton.cdiv(d, 32))](src.contiguous(), index, out, d, ALPHA, BLOCK_D=32)
        return out


def get_inputs():
    return [torch.randn(R, D), torch.randint(0, R, (K,)), torch.randn(K, D)]


def get_init_inputs():
    return []
