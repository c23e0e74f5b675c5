"""Fused residual add + RMSNorm, fp16.

h = x + residual (fp16); y = h / sqrt(mean(h^2, dim=-1) + eps) * weight, computed in fp32 and cast to fp16.
x, residual, h, y are (M, N) fp16; weight is an (N,) fp16 parameter; eps = 1e-6. forward returns (y, h).

Known problems:
- L66-L68: BLOCK_N = next_power_of_2(N) with the default num_warps=4: untuned for a 4096-wide fp16 row; one row per program is otherwise a reasonable layout for this memory-bound op.
- L35: the (N,) weight vector is reloaded by every one of the M row programs (L2 hits, but redundant load instructions and L2 traffic); several rows per program would amortise it.
- L33-L34: sum of squares is one cross-warp reduction per row followed by a scalar rsqrt computed as 1/sqrt; small serial latency per row, minor.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-6


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, N, stride_x, stride_r, stride_y, stride_h, eps,
                       BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    r = tl.load(r_ptr + row * stride_r + cols, mask=mask, other=0.0)
    h = x + r
    tl.store(h_ptr + row * stride_h + cols, h, mask=mask)
    hf = h.to(tl.float32)
    ms = tl.sum(hf * hf, axis=0) / N
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = hf * rstd * w
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.float16), mask=mask)


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, dtype=torch.float16))
        self.eps = EPS

    def forward(self, x, residual):
        h = x + residual
        hf = h.float()
        var = hf.pow(2).mean(dim=-1, keepdim=True)
        y = (hf * torch.rsqrt(var + self.eps) * self.weight.float()).to(torch.float16)
        return y, h


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, dtype=torch.float16))
        self.eps = EPS

    def forward(self, x, residual):
        x = x.contiguous()
        residual = residual.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        h = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n)
        add_rmsnorm_kernel[(m,)](x, residual, self.weight, y, h, n, x.stride(0), residual.stride(0),
                                 y.stride(0), h.stride(0), self.eps, BLOCK_N=BLOCK_N)
        return y, h


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16), torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return [N]


TEST_SHAPES = [{"M": 64, "N": 256}, {"M": 37, "N": 203}]
