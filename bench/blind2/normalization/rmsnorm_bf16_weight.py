"""RMSNorm with weight: y = x * rsqrt(mean(x^2, dim=-1) + 1e-6) * w, x bf16 (M, N), w bf16 (N,), y bf16 (M, N), math in fp32.

One Triton program handles one row. The whole row is loaded at once into a
power-of-two block (BLOCK_N = next_power_of_2(N), 4096 for the default size),
upcast to fp32, the mean of squares is reduced in registers, and the row is
scaled by the reciprocal RMS and by the weight (also upcast to fp32) before a
single rounding to bf16 on store.

Known problems:
- line 43: the launch uses the default num_warps=4 for a 4096-wide row, i.e. 32 fp32 values per thread held live across the reduction; num_warps=8 (or 16) would lower register pressure and put more loads in flight per SM.
- line 32: the weight vector is re-loaded by every one of the M programs (it stays in L2, but it is an extra 8 KB load per row).
- line 31: 1.0 / tl.sqrt(...) instead of rsqrt (minor, once per row).
- line 41: BLOCK_N = next_power_of_2(N) puts the whole row in registers; for N much larger than 8192 this would spill, there is no looping fallback.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / N
    rstd = 1.0 / tl.sqrt(mean_sq + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.bfloat16), mask=mask)


def rmsnorm(x, weight, eps=1e-6):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    rmsnorm_kernel[grid](x, weight, y, n_cols, x.stride(0), y.stride(0), eps, BLOCK_N=BLOCK_N)
    return y


class Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size).to(torch.bfloat16))
        self.eps = 1e-6

    def forward(self, x):
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * rstd * self.weight.float()).to(torch.bfloat16)


class ModelNew(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size).to(torch.bfloat16))
        self.eps = 1e-6

    def forward(self, x):
        return rmsnorm(x, self.weight, self.eps)


def get_inputs():
    return [torch.randn(M, N).to(torch.bfloat16)]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 37, "N": 1000},
    {"M": 71, "N": 129},
    {"M": 19, "N": 4099},
]
