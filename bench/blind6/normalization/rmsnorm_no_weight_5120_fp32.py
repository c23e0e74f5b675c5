"""RMSNorm without weight, fp32.

y = x * rsqrt(mean(x^2, dim=-1) + 1e-6), no learnable scale.
x: (M, N) fp32 -> y: (M, N) fp32.
Benchmark shape: M = 8192 rows, N = 5120 columns.

Known problems:
- line 46: the row of 5120 is padded to BLOCK_N=8192, so 37.5% of lanes are masked off in the load, square, sum and store (compute and registers only; no extra bytes move).
- lines 32, 47-48: one row per program with a fixed 8 warps and no autotuning; otherwise the kernel reads and writes each element once, so it should already be close to memory bandwidth and the remaining gains are small.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 5120

EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)


@triton.jit
def _rmsnorm_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(mean_sq + eps)
    y = x * rstd
    tl.store(y_ptr + row * stride_y + offs, y, mask=mask)


def rmsnorm(x, eps=EPS):
    n_cols = x.shape[-1]
    x2d = x.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2d)
    BLOCK_N = triton.next_power_of_2(n_cols)
    num_warps = 8 if BLOCK_N >= 2048 else 4
    grid = (x2d.shape[0],)
    _rmsnorm_kernel[grid](x2d, y, n_cols, x2d.stride(0), y.stride(0), eps,
                          BLOCK_N=BLOCK_N, num_warps=num_warps)
    return y.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return rmsnorm(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 512},
    {"M": 37, "N": 129},
    {"M": 100, "N": 5120},
]
