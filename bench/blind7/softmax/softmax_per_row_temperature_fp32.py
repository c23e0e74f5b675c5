"""Row softmax with a per-row temperature.

Computes y = torch.softmax(x / t[:, None], dim=1) for x of shape (M, N) float32 and
t of shape (M,) float32 (positive temperatures); output (M, N) float32.
Benchmark shape: M=8192, N=4096 (~134 MB in, ~134 MB out).

Known problems:
- One program per row with the whole row (BLOCK_N = next_power_of_2(N)) held in
  registers; for N=4096 that is 32 fp32 values per thread at num_warps=4, and it
  would spill or fail to compile for much larger N (no looped fallback).
- Divides every element by t instead of multiplying by a precomputed 1/t, and uses
  tl.exp rather than exp2 with a folded log2(e) scale.
- num_warps=4 is a fixed guess, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, t):
        return torch.softmax(x / t[:, None], dim=1)


@triton.jit
def _softmax_temp_kernel(x_ptr, t_ptr, y_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    base = row.to(tl.int64) * n_cols
    t = tl.load(t_ptr + row)
    x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
    z = x / t
    mx = tl.max(z, axis=0)
    e = tl.exp(z - mx)
    e = tl.where(mask, e, 0.0)
    s = tl.sum(e, axis=0)
    tl.store(y_ptr + base + cols, e / s, mask=mask)


def softmax_temperature(x, t):
    x = x.contiguous()
    t = t.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n)
    _softmax_temp_kernel[(m,)](x, t, y, n, BLOCK_N=BLOCK_N, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, t):
        return softmax_temperature(x, t)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float32)
    t = torch.rand(M, dtype=torch.float32) * 1.9 + 0.1  # positive temperatures in [0.1, 2.0)
    return [x, t]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 129, "N": 129},
    {"M": 8, "N": 1000},
]
