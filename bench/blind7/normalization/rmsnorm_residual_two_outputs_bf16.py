"""Fused residual add + RMSNorm returning both the normalised output and the residual sum.

Computes
    s = x + r                                   (bf16)
    y = s * rsqrt(mean(s^2, dim=-1) + 1e-6) * weight
    return (y, s)

The mean/rsqrt are computed in fp32 on s (as stored in bf16), the product with weight in
fp32, and y is rounded to bf16 once.

Shapes / dtypes:
    x, r: (M, N) bf16, weight: (N,) bf16 -> y: (M, N) bf16, s: (M, N) bf16
    benchmark: M=8192, N=4096

Known problems:
- One program per row with the whole row in a single register tile (BLOCK_N = N
  rounded up to a power of two); fine for N=4096 but not scalable to very wide rows,
  and a single row per program means short-lived programs with a tail reduction each.
- weight is re-loaded by every row's program instead of being reused across rows.
- Block size / num_warps are fixed guesses, and loads/stores are plain (no eviction
  hints even though x and r are read exactly once).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, r, weight):
        s = x + r
        sf = s.float()
        inv = torch.rsqrt(sf.pow(2).mean(dim=-1, keepdim=True) + EPS)
        y = (sf * inv * weight.float()).to(x.dtype)
        return y, s


@triton.jit
def _add_rmsnorm_kernel(
    x_ptr, r_ptr, w_ptr, y_ptr, s_ptr,
    n_cols, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    base = row * n_cols

    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    s = (x + r).to(s_ptr.dtype.element_ty)          # round the sum like torch's bf16 add
    tl.store(s_ptr + base + offs, s, mask=mask)

    sf = s.to(tl.float32)
    ms = tl.sum(sf * sf, axis=0) / n_cols
    inv = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = sf * inv * w
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def add_rmsnorm(x, r, weight, eps=EPS):
    x = x.contiguous()
    r = r.contiguous()
    weight = weight.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    s = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n)
    num_warps = 8 if BLOCK_N >= 4096 else 4
    _add_rmsnorm_kernel[(m,)](x, r, weight, y, s, n, eps, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return y, s


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, r, weight):
        return add_rmsnorm(x, r, weight)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.bfloat16)
    r = torch.randn(M, N, dtype=torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(N)).to(torch.bfloat16)
    return [x, r, weight]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 8, "N": 4096},
    {"M": 129, "N": 129},
]
