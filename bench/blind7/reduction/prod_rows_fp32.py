"""Row-wise product of an fp32 matrix.

Computes torch.prod(x, dim=1).
  x:   (M, N) float32, values near 1 (1 + 0.001 * randn)
  out: (M,)   float32

Known problems:
- One program per row with a serial loop over N; only M programs, and each program's
  strip of BLOCK_N elements is reduced only at the end (no split of long rows).
- BLOCK_N=1024 with default num_warps is a guess, not tuned.
- Multiplication order differs from PyTorch's (lane-wise partial products then a tree),
  so results match only up to rounding.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.prod(x, dim=1)


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def prod_rows_kernel(x_ptr, out_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * stride_m
    acc = tl.full([BLOCK_N], 1.0, dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(base + offs, mask=offs < N, other=1.0)
        acc = acc * v
    p = tl.reduce(acc, 0, _mul_combine)
    tl.store(out_ptr + row, p)


def prod_rows(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty((m,), device=x.device, dtype=x.dtype)
    BLOCK_N = 1024
    prod_rows_kernel[(m,)](x, out, n, x.stride(0), BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return prod_rows(x)


def get_inputs():
    x = 1.0 + 0.001 * torch.randn(M, N, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 5, "N": 2500},
    {"M": 129, "N": 1},
]
