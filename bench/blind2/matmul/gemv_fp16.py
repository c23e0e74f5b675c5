"""y = W @ x: W (M, K) fp16 parameter, x (K,) fp16 -> y (M,) fp16, fp32 accumulation.

Each Triton program owns BLOCK_M consecutive rows of W. It walks K in BLOCK_K chunks: loads a (BLOCK_M, BLOCK_K)
tile of W and the matching slice of x, multiplies them in fp32, reduces the tile over K with tl.sum and adds the
row sums to a per-row fp32 accumulator. The final row sums are stored as fp16. The kernel is purely memory bound
(W is read exactly once).

Known problems:
- line 47: tl.sum over the K axis inside the loop does a cross-thread reduction on every iteration; keeping a
  (BLOCK_M, BLOCK_K) fp32 accumulator and reducing once after the loop is cheaper.
- lines 57-58: BLOCK_K = 64 fp16 is only 128 bytes per row per step, so each iteration issues small
  requests and the loop runs K / 64 = 128 trips with little memory-level parallelism; wider K chunks (256-1024)
  and more rows in flight are needed to approach H200 HBM bandwidth. No num_warps / num_stages tuning either.
- line 46: the x slice is reloaded by every program (from L2) on every iteration; harmless for bandwidth
  but it adds load instructions to a loop that should be pure streaming of W.
- lines 43-44: row and K masks recomputed every iteration although only the last K chunk and the
  last row block can be partial.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
K = 8192


@triton.jit
def gemv_kernel(
    w_ptr, x_ptr, y_ptr,
    M, K,
    stride_wm, stride_wk,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + offs_k
        w_mask = (offs_m[:, None] < M) & (cols[None, :] < K)
        w = tl.load(w_ptr + offs_m[:, None] * stride_wm + cols[None, :] * stride_wk, mask=w_mask, other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)

    tl.store(y_ptr + offs_m, acc.to(tl.float16), mask=offs_m < M)


def gemv(w, x):
    M_, K_ = w.shape
    assert x.shape == (K_,)
    x = x.contiguous()
    y = torch.empty((M_,), device=w.device, dtype=torch.float16)
    BLOCK_M = 32
    BLOCK_K = 64
    grid = (triton.cdiv(M_, BLOCK_M),)
    gemv_kernel[grid](
        w, x, y,
        M_, K_,
        w.stride(0), w.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K,
    )
    return y


class Model(nn.Module):
    def __init__(self, rows, cols):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(rows, cols) / math.sqrt(cols)).to(torch.float16))

    def forward(self, x):
        return self.weight @ x


class ModelNew(nn.Module):
    def __init__(self, rows, cols):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(rows, cols) / math.sqrt(cols)).to(torch.float16))

    def forward(self, x):
        return gemv(self.weight, x)


def get_inputs():
    return [torch.randn(K).to(torch.float16)]


def get_init_inputs():
    return [M, K]


TEST_SHAPES = [
    {"M": 37, "K": 129},
    {"M": 129, "K": 71},
    {"M": 100, "K": 1031},
]
