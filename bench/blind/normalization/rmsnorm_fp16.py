"""RMSNorm with weight over the last dim of an (M, N) fp16 matrix, eps 1e-6, computed in fp32, output fp16:
y = (x / sqrt(mean(x^2) + eps)) * weight.

Known problems:
- lines 39-42 and 44-49: two passes over each row (sum of squares, then normalize) load x twice; the 8 KB fp16 row (N=4096) fits in registers, so x could be read once
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 3, "N": 2500},
]


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        xf = x.float()
        rms = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * rms * self.weight.float()).to(x.dtype)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        acc += v * v
    rrms = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + offs, (v * rrms * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x, weight, eps):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    BLOCK = 1024
    rmsnorm_kernel[(x2.shape[0],)](x2, weight, y, n_cols, x2.stride(0), y.stride(0), eps, BLOCK=BLOCK)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        return rmsnorm(x, self.weight, self.eps)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return [N]
