"""Cumulative product along dim 0 of a 2-D fp32 tensor.

x: (M, N) fp32 with entries close to 1 (1 + 0.001 * randn, so the running product stays finite);
out[i, j] = prod_{k <= i} x[k, j], fp32. Each program owns a block of BLOCK_N columns and walks the
rows in chunks of BLOCK_M: tl.cumprod over the chunk's rows, times the running product (carry) of
all earlier rows, then the carry is multiplied by the chunk's total product.

Known problems:
- L55-56: grid = cdiv(N, 64) = 64 programs for N=4096 columns, fewer than half the SMs of an H200, and each walks all M=4096 rows sequentially (128 dependent chunk iterations): badly under-occupied and latency-bound; the scan dimension is never split across programs.
- L46, L48: tl.cumprod along axis 0 (rows spread across threads/warps, shared-memory round trips per chunk) plus a separate tl.reduce product of the same chunk for the carry instead of reusing the last scanned row.
- L41-48, L55: serial load -> scan -> store -> carry chain with no explicit prefetch of the next chunk; BLOCK_M=32 / BLOCK_N=64 fixed, default num_warps, no autotune.

"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 4096
N = 4096

TEST_SHAPES = [
    {"M": 77, "N": 45},
    {"M": 64, "N": 128},
    {"M": 5, "N": 300},
]


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def cumprod_dim0_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    carry = tl.full((BLOCK_N,), 1.0, dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows < M)[:, None] & n_mask[None, :]
        offs = rows[:, None] * N + offs_n[None, :]
        v = tl.load(x_ptr + offs, mask=mask, other=1.0)
        cp = tl.cumprod(v, axis=0) * carry[None, :]
        tl.store(y_ptr + offs, cp, mask=mask)
        carry = carry * tl.reduce(v, 0, _mul)


def cumprod_dim0(x):
    x = x.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    BLOCK_M, BLOCK_N = 32, 64
    grid = (triton.cdiv(n, BLOCK_N),)
    cumprod_dim0_kernel[grid](x, y, m, n, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumprod_dim0(x)


def get_inputs():
    return [1.0 + 0.001 * torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
