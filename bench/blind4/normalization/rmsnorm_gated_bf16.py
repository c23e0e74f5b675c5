"""Gated RMSNorm: y = rmsnorm(x * silu(z)) * weight over the last dim (eps 1e-6), bf16 in/out, fp32 compute.

Known problems:
- Lines 51-54: one row per program with the whole 4096-wide row held in registers, launched with default num_warps=4; more warps (8-16) would be the usual choice for this width.
- Line 40: 1.0 / tl.sqrt instead of tl.rsqrt (minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
HIDDEN = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden).to(torch.bfloat16))
        self.eps = EPS

    def forward(self, x, z):
        g = x.float() * torch.nn.functional.silu(z.float())
        rstd = torch.rsqrt(g.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (g * rstd * self.weight.float()).to(torch.bfloat16)


@triton.jit
def rmsnorm_gated_kernel(x_ptr, z_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_z, stride_y, eps,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + row * stride_z + cols, mask=mask, other=0.0).to(tl.float32)
    g = x * (z / (1.0 + tl.exp(-z)))
    g = tl.where(mask, g, 0.0)
    ms = tl.sum(g * g, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = g * rstd * w
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.bfloat16), mask=mask)


def rmsnorm_gated(x, z, weight, eps):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    z2 = z.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    BLOCK = triton.next_power_of_2(n_cols)
    grid = (x2.shape[0],)
    rmsnorm_gated_kernel[grid](x2, z2, weight, y, n_cols, x2.stride(0), z2.stride(0), y.stride(0), eps,
                               BLOCK=BLOCK)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden).to(torch.bfloat16))
        self.eps = EPS

    def forward(self, x, z):
        return rmsnorm_gated(x, z, self.weight, self.eps)


def get_inputs():
    x = torch.randn(N_ROWS, HIDDEN).to(torch.bfloat16)
    z = torch.randn(N_ROWS, HIDDEN).to(torch.bfloat16)
    return [x, z]


def get_init_inputs():
    return [HIDDEN]


TEST_SHAPES = [
    {"N_ROWS": 64, "HIDDEN": 256},
    {"N_ROWS": 37, "HIDDEN": 129},
    {"N_ROWS": 100, "HIDDEN": 1000},
]
