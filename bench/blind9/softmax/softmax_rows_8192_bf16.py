"""Row softmax: torch.softmax(x, dim=-1) for x of shape (M, N), bf16.
Known problems:
- One row per program; whole row held in registers (BLOCK_N = next_pow2(N)), spills / low occupancy for large N.
- No multi-row batching per program for small N, no persistent grid.
- Fixed num_warps heuristic, no autotune.
- Uses tl.exp rather than exp2 with a folded log2(e) factor.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def _softmax_rows(X, Y, NCOLS, sxm, sxn, sym, syn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < NCOLS
    x = tl.load(X + row * sxm + cols * sxn, mask=mask, other=float("-inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    e = tl.exp(x - x_max)
    e = tl.where(mask, e, 0.0)
    denom = tl.sum(e, axis=0)
    y = e / denom
    tl.store(Y + row * sym + cols * syn, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n)
        m = x2.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        BLOCK_N = triton.next_power_of_2(n)
        num_warps = 4
        if BLOCK_N >= 2048:
            num_warps = 8
        if BLOCK_N >= 8192:
            num_warps = 16
        _softmax_rows[(m,)](
            x2, y, n, x2.stride(0), x2.stride(1), y.stride(0), y.stride(1),
            BLOCK_N=BLOCK_N, num_warps=num_warps,
        )
        return y.reshape(x.shape)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 5, "N": 100},
    {"M": 3, "N": 1000},
    {"M": 7, "N": 333},
]
