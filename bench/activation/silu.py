"""SiLU (x * sigmoid(x)) of a flat fp32 tensor of 32M elements.

Known problems:
- line 23: sigmoid written as 1 / (1 + exp(-x)): a division per element
- line 36: BLOCK_SIZE=512 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32 * 1024 * 1024
TEST_SHAPES = [{"N": 1000}, {"N": 4096}]


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    sig = 1.0 / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offs, x * sig, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        silu_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK_SIZE=512)
        return out


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
