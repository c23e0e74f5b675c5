"""Column-wise L-infinity norm of a bf16 matrix.

Computes x.abs().amax(dim=0) (max of |x| over the rows, per column).
  x:   (M, N) bfloat16, contiguous
  out: (N,)   bfloat16

Known problems:
- Parallelism is only over columns: cdiv(N, BLOCK_N) programs (32 for N=1024), each
  walking all M rows serially, so most SMs sit idle (no split of M plus a second pass).
- Each row strip read is only BLOCK_N=32 bf16 values (64 bytes), so loads are poorly
  coalesced / use partial sectors.
- Block sizes are fixed guesses, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.abs().amax(dim=0)


@triton.jit
def linf_dim0_kernel(x_ptr, out_ptr, M, N,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        offs_m = m0 + tl.arange(0, BLOCK_M)
        mask = (offs_m[:, None] < M) & mask_n[None, :]
        ptrs = x_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
        v = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        acc = tl.maximum(acc, tl.abs(v))
    res = tl.max(acc, axis=0)
    tl.store(out_ptr + offs_n, res.to(tl.bfloat16), mask=mask_n)


def linf_dim0(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty((n,), device=x.device, dtype=x.dtype)
    BLOCK_M = 128
    BLOCK_N = 32
    grid = (triton.cdiv(n, BLOCK_N),)
    linf_dim0_kernel[grid](x, out, m, n, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return linf_dim0(x)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 300, "N": 129},
    {"M": 1, "N": 7},
]
