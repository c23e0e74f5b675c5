"""RMSNorm over the last dim, computed in fp32 and cast back:
xf = x.float(); y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(x.dtype)
Known problems:
- One program per row holding the whole 8192-wide row in registers (fixed block = next_power_of_2(N)); high register pressure.
- Fixed num_warps, no autotune.
- Weight is re-loaded by every row program instead of being reused across several rows per program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, n, dtype=torch.float32))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
        return (y * self.weight.float()).to(x.dtype)


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    base = row * n_cols
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, n, dtype=torch.float32))

    def forward(self, x):
        x = x.contiguous()
        n = x.shape[-1]
        rows = x.numel() // n
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n)
        _rmsnorm_kernel[(rows,)](x, self.weight, y, n, EPS, BLOCK_N=BLOCK_N, num_warps=8)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 4, "N": 96},
    {"M": 9, "N": 517},
    {"M": 5, "N": 1200},
]
