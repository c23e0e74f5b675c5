"""Residual add + LayerNorm: y = layer_norm(x + residual) with affine weight and bias, over the last dim of
(M, N) fp32 matrices; returns the normalized tensor only.

Known problems:
- lines 35-40, 74-76: the residual add is a separate kernel that writes h = x + residual to HBM and the layernorm kernel reads it back (an extra 64 MB write plus read and a second launch); the add belongs inside the layernorm kernel
- lines 49-51, 54-58, 60-66: three passes (mean, variance, normalize) load each 16 KB row of h three times instead of once
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 3, "N": 2200},
]


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x, residual):
        h = x + residual
        return torch.nn.functional.layer_norm(h, (h.shape[-1],), self.weight, self.bias, self.eps)


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def layernorm_kernel(h_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    h_row = h_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(h_row + offs, mask=offs < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        d = tl.where(mask, tl.load(h_row + offs, mask=mask, other=0.0) - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(h_row + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(y_row + offs, (v - mean) * rstd * w + b, mask=mask)


def add_layernorm(x, residual, weight, bias, eps):
    x = x.contiguous()
    residual = residual.contiguous()
    n_cols = x.shape[-1]
    n_rows = x.numel() // n_cols
    h = torch.empty_like(x)
    BLOCK_ADD = 1024
    add_kernel[(triton.cdiv(x.numel(), BLOCK_ADD),)](x, residual, h, x.numel(), BLOCK=BLOCK_ADD)
    y = torch.empty_like(x)
    BLOCK = 1024
    layernorm_kernel[(n_rows,)](h, weight, bias, y, n_cols, eps, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x, residual):
        return add_layernorm(x, residual, self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return [N]
