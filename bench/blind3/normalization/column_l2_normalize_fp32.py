"""Column L2 normalisation: y = x / max(||x||_2 over dim 0, 1e-12), i.e. F.normalize(x, p=2, dim=0); x, y (M, N) fp32.

Known problems:
- L60-L61: the grid is cdiv(N, BLOCK_N) = 64 programs for N=4096, fewer than half of the H200's 132 SMs, each walking all M=8192 rows serially with no split over M; most of the GPU idles and bandwidth is far below peak.
- L26-L38: the input is read twice from global memory (norm pass at L29, scale pass at L36); each column strip (2 MB) is too big to stay on chip, so traffic is 1.5x the minimum.
- L26-L30, L33-L38: each iteration moves one 32x64 fp32 tile (8 KB) and waits on it before the next; little memory in flight per SM, so both loops are latency-bound; L37 also divides per element instead of multiplying by a reciprocal.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-12


@triton.jit
def column_l2_normalize_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, eps,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m_start in range(0, M, BLOCK_M):
        rows = m_start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        acc += x * x
    norm = tl.sqrt(tl.sum(acc, axis=0))
    denom = tl.maximum(norm, eps)
    for m_start in range(0, M, BLOCK_M):
        rows = m_start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        y = x / denom[None, :]
        tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], y, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = EPS

    def forward(self, x):
        return torch.nn.functional.normalize(x, p=2.0, dim=0, eps=self.eps)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = EPS

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_M = 32
        BLOCK_N = 64
        grid = (triton.cdiv(n, BLOCK_N),)
        column_l2_normalize_kernel[grid](x, y, m, n, x.stride(0), y.stride(0), self.eps,
                                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"M": 64, "N": 128}, {"M": 37, "N": 203}]
