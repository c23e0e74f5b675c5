"""GELU with the tanh approximation of a flat fp32 tensor of 32M elements.

Known problems:
- lines 24-26: tanh built from two exps and a division (no tl.math/libdevice tanh)
- line 40: BLOCK_SIZE=256 with the default num_warps: 131072 programs
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32 * 1024 * 1024
TEST_SHAPES = [{"N": 777}, {"N": 2048}]


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    e_pos = tl.exp(inner)
    e_neg = tl.exp(-inner)
    t = (e_pos - e_neg) / (e_pos + e_neg)
    t = tl.where(inner > 15.0, 1.0, tl.where(inner < -15.0, -1.0, t))
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        gelu_tanh_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK_SIZE=256)
        return out


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
