"""
Gemma-style RMSNorm with a (1 + weight) scale, fp32.

Computes y = x * rsqrt(mean(x^2, dim=-1) + 1e-6) * (1 + w) for x of shape
(N_ROWS, D) float32 and w an nn.Parameter of shape (D,) initialised with
randn(D) * 0.1; output (N_ROWS, D) float32.
Benchmark shape: N_ROWS=16384, D=2048.

Known problems:
- L39-L41: one program per row with the whole row held in registers (BLOCK_D = next_pow2(D)); fine at D=2048 but spills or fails to compile for very wide rows, and non-power-of-2 D wastes masked lanes.
- L44-L45: the weight row is reloaded (and 1 + w recomputed) by every one of the 16384 programs instead of being reused across several rows per program.
- L55-L57: num_warps is left at the default 4 for a 2048-wide fp32 row (16 values per thread); not tuned to the row width.
- L51-L51: x.contiguous() / view copy a strided input instead of passing the row stride of the original layout.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 16384
D = 2048


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x):
        var = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(var + self.eps) * (1.0 + self.weight)


@triton.jit
def rmsnorm_one_plus_kernel(x_ptr, w_ptr, y_ptr, D, stride_x, stride_y, eps,
                            BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / D
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * (1.0 + w)
    tl.store(y_ptr + row * stride_y + offs, y, mask=mask)


def rmsnorm_one_plus(x, weight, eps):
    shape = x.shape
    x2 = x.contiguous().view(-1, shape[-1])
    n_rows, dim = x2.shape
    y = torch.empty_like(x2)
    BLOCK_D = triton.next_power_of_2(dim)
    grid = (n_rows,)
    rmsnorm_one_plus_kernel[grid](x2, weight, y, dim, x2.stride(0), y.stride(0), eps,
                                  BLOCK_D=BLOCK_D)
    return y.view(shape)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x):
        return rmsnorm_one_plus(x, self.weight, self.eps)


def get_inputs():
    x = torch.randn(N_ROWS, D, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [D]


TEST_SHAPES = [
    {"N_ROWS": 37, "D": 129},
    {"N_ROWS": 16, "D": 256},
    {"N_ROWS": 5, "D": 1000},
]
