"""GELU (tanh form) of x + bias, bias broadcast over the rows of a (M, N) fp32 matrix.

The first draft launches two kernels back to back: one adds the bias, one applies GELU.

Known problems:
- lines 60-61: two launches on the same data; the intermediate tensor makes a full round trip through memory
- line 28: the bias column is recovered with a per-element modulo by a runtime value
- lines 25, 36: offsets widened to int64 (the tensor has far fewer than 2**31 elements)
- lines 59-61: BLOCK_SIZE=256 with the default num_warps: small programs, many of them
- lines 42-43: tanh written by hand with exp and a per-element division
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
TEST_SHAPES = [{"M": 64, "N": 256}, {"M": 37, "N": 203}]


@triton.jit
def add_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, n_cols, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    cols = offsets % n_cols
    x = tl.load(x_ptr + offsets, mask=mask)
    b = tl.load(bias_ptr + cols, mask=mask)
    tl.store(out_ptr + offsets, x + b, mask=mask)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # tanh(u) = 1 - 2 / (exp(2u) + 1), safe when exp overflows
    t = tl.exp(2.0 * inner)
    tanh = 1.0 - 2.0 / (t + 1.0)
    y = 0.5 * x * (1.0 + tanh)
    tl.store(out_ptr + offsets, y, mask=mask)


class Model(nn.Module):
    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias, approximate="tanh")


class ModelNew(nn.Module):
    def forward(self, x, bias):
        x = x.contiguous()
        tmp = torch.empty_like(x)
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 256),)
        add_bias_kernel[grid](x, bias, tmp, n, x.shape[1], BLOCK_SIZE=256)
        gelu_kernel[grid](tmp, out, n, BLOCK_SIZE=256)
        return out


def get_inputs():
    return [torch.randn(M, N), torch.randn(N)]


def get_init_inputs():
    return []
