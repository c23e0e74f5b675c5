"""Column-wise minimum: y = x.amin(dim=0) of a (M, N) fp16 tensor; y is (N,) fp16.

Known problems:
- L51-L52: the grid is cdiv(N, BLOCK_N) = 64 programs for N=4096, fewer than half of the H200's 132 SMs, and each program walks all M=16384 rows serially; there is no split over M (e.g. partial minima per row chunk), so most of the GPU idles and bandwidth is far below peak.
- L24-L29: each loop iteration loads one 32x64 fp16 tile (4 KB) and waits on it before the next; with one program per SM that is very little memory in flight per SM, so the loop is latency-bound.
- L28: every element is upcast to fp32 although min is exact in fp16 (extra conversions and a 2x larger accumulator tile); minor next to the grid problem.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def column_min_kernel(x_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.full((BLOCK_M, BLOCK_N), float("inf"), dtype=tl.float32)
    for m_start in range(0, M, BLOCK_M):
        rows = m_start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :]
        x = tl.load(ptrs, mask=mask, other=float("inf")).to(tl.float32)
        acc = tl.minimum(acc, x)
    result = tl.min(acc, axis=0)
    tl.store(y_ptr + cols, result.to(tl.float16), mask=col_mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amin(dim=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((n,), dtype=x.dtype, device=x.device)
        BLOCK_M = 32
        BLOCK_N = 64
        grid = (triton.cdiv(n, BLOCK_N),)
        column_min_kernel[grid](x, y, m, n, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"M": 64, "N": 128}, {"M": 37, "N": 203}, {"M": 100, "N": 65}]
