"""Scaled, biased row softmax: y = softmax(x * scale + bias[None, :], dim=-1).

x, y (M, N) fp32; bias an (N,) fp32 parameter; scale a Python float given at construction.

Known problems:
- L57-L58: BLOCK_N = next_power_of_2(N) with the default num_warps=4: untuned for a 4096-wide fp32 row (32 elements per thread); one row per program is otherwise a reasonable layout.
- L27: the (N,) bias vector is reloaded by every one of the M row programs (L2 hits, but redundant load instructions and L2 traffic).
- L31-L33: tl.exp instead of exp2 with log2(e) folded into scale, and a per-element divide by the row sum instead of one reciprocal and a multiply; minor ALU cost on a memory-bound op.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
SCALE = 0.125


@triton.jit
def softmax_scale_bias_kernel(x_ptr, b_ptr, y_ptr, N, stride_x, stride_y, scale, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    z = x * scale + b
    z = tl.where(mask, z, float("-inf"))
    z_max = tl.max(z, axis=0)
    num = tl.exp(z - z_max)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class Model(nn.Module):
    def __init__(self, n, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float32))
        self.scale = scale

    def forward(self, x):
        return torch.softmax(x * self.scale + self.bias[None, :], dim=-1)


class ModelNew(nn.Module):
    def __init__(self, n, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float32))
        self.scale = scale

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n)
        softmax_scale_bias_kernel[(m,)](x, self.bias, y, n, x.stride(0), y.stride(0), self.scale, BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return [N, SCALE]


TEST_SHAPES = [{"M": 64, "N": 256}, {"M": 37, "N": 203}]
