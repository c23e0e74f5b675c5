"""LayerNorm over the last dimension of a non-power-of-two width, with weight and bias.

Computes
    y = F.layer_norm(x, (N,), weight, bias, eps=1e-5)

Shapes / dtypes:
    x: (M, N) fp16, weight: (N,) fp16, bias: (N,) fp16 -> y: (M, N) fp16
    benchmark: M=8192, N=5000

Known problems:
- One program per row loads the whole row into a single BLOCK_N = next_power_of_2(N)
  register tile: for N=5000 that is 8192 lanes, so ~39% of lanes are masked-off work,
  and the large tile puts pressure on registers.
- weight and bias are re-loaded by every row's program (relying on L2), instead of being
  kept across several rows per program.
- num_warps is a fixed guess; with a single-row-per-program design there is no
  multi-row batching to amortise the reductions.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 8192
N = 5000
EPS = 1e-5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps=EPS)


@triton.jit
def _layernorm_row_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    n_cols, stride_x, stride_y, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols

    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x, weight, bias, eps=EPS):
    x = x.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n)
    num_warps = 8 if BLOCK_N >= 4096 else 4
    _layernorm_row_kernel[(m,)](
        x, weight.contiguous(), bias.contiguous(), y,
        n, x.stride(0), y.stride(0), eps,
        BLOCK_N=BLOCK_N, num_warps=num_warps,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        return layernorm(x, weight, bias)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    weight = (1.0 + 0.1 * torch.randn(N)).to(torch.float16)
    bias = (0.1 * torch.randn(N)).to(torch.float16)
    return [x, weight, bias]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 16, "N": 5000},
    {"M": 129, "N": 129},
]
