"""Linear layer + bias + softplus, fp16.

y = softplus(x @ W^T + b), with W, b from nn.Linear(K, N).half().
x: (M, K) fp16, W: (N, K) fp16, b: (N,) fp16 -> y: (M, N) fp16.
Benchmark shape: M = 4096, K = 4096, N = 4096. Softplus uses PyTorch's
defaults (beta = 1, threshold = 20).

Known problems:
- lines 43-44, 80: plain row-major 2D grid with no grouped (swizzled) tile order, so programs running together share few x/W tiles and L2 reuse is poor.
- lines 79, 88: fixed 128x128x32 tiles with num_warps=4 and default num_stages, no autotuning; a 128x128 fp32 accumulator over 4 warps is 128 registers per thread (spill/occupancy risk), BLOCK_K=32 is short for Hopper pipelining, and no TMA/wgmma-friendly persistent schedule is used.
- lines 51-60: K-loop recomputes full pointer grids and applies K masks every iteration even when K is a multiple of BLOCK_K (the benchmark case), adding integer/predicate work to the inner loop.
- line 80: non-persistent grid of 32x32 = 1024 tiles is about 7.8 waves over 132 SMs, so the last wave runs partly empty.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return F.softplus(self.linear(x))


@triton.jit
def _linear_softplus_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        # x tile: (BLOCK_M, BLOCK_K)
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + ks[None, :] * stride_xk
        x_mask = (offs_m[:, None] < M) & (ks[None, :] < K)
        x_tile = tl.load(x_ptrs, mask=x_mask, other=0.0)
        # W^T tile: (BLOCK_K, BLOCK_N), read from W (N, K)
        w_ptrs = w_ptr + offs_n[None, :] * stride_wn + ks[:, None] * stride_wk
        w_mask = (offs_n[None, :] < N) & (ks[:, None] < K)
        w_tile = tl.load(w_ptrs, mask=w_mask, other=0.0)
        acc += tl.dot(x_tile, w_tile)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    # PyTorch's linear output is fp16 before softplus: round first
    z = z.to(tl.float16).to(tl.float32)
    # softplus with beta=1, threshold=20
    sp = tl.where(z > 20.0, z, tl.log(1.0 + tl.exp(tl.minimum(z, 20.0))))

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    y_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptrs, sp.to(tl.float16), mask=y_mask)


def linear_softplus(x, weight, bias):
    Mx, Kx = x.shape
    Nw = weight.shape[0]
    y = torch.empty((Mx, Nw), dtype=torch.float16, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
    _linear_softplus_kernel[grid](
        x, weight, bias, y,
        Mx, Nw, Kx,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return linear_softplus(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 128},
    {"M": 100, "K": 129, "N": 37},
    {"M": 37, "K": 200, "N": 129},
]
