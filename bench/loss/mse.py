"""Mean squared error between two flat fp32 tensors of 64M elements (a scalar).

Known problems:
- line 27: one atomic add per program into one scalar: 65536 programs contend on one address
- line 26: the division by n done inside the kernel on every partial sum instead of once
- line 39: BLOCK_SIZE=1024: small partial sums per program
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 64 * 1024 * 1024
TEST_SHAPES = [{"N": 2500}, {"N": 4096}]


@triton.jit
def mse_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    d = x - y
    partial = tl.sum(d * d, axis=0) / n
    tl.atomic_add(out_ptr, partial)


class Model(nn.Module):
    def forward(self, x, y):
        return torch.nn.functional.mse_loss(x, y).reshape(1)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        n = x.numel()
        mse_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
