"""y = tanh(x @ W + b): x (M, K) fp16, W (K, N) fp16, b (N,) fp16 -> y (M, N) fp16, fp32 accumulation.

One Triton program computes one BLOCK_M x BLOCK_N tile of y on a 2D grid. It walks K in BLOCK_K steps, loading a
masked x tile and a masked W tile and accumulating tl.dot into an fp32 accumulator. The epilogue adds the bias row,
applies tanh (written as 1 - 2 / (exp(2z) + 1), which saturates cleanly to +-1) and stores fp16.

Known problems:
- line 74: plain 2D launch grid with no grouped/swizzled tile order, so for 4096^3 the W column panels are
  re-read from HBM by many programs instead of being reused from L2.
- lines 71-73: fixed 64x64x32 tiles with default num_warps=4 / num_stages; far too small for H200 tensor
  cores on a 4096^3 fp16 GEMM (128x128x64 or 128x256x64 with 3-4 stages and 8 warps is typical), and no autotune.
- lines 50-52: the K-edge masks are computed and applied on every iteration even though only the
  last K step can be partial; this costs integer ALU work in the hot loop and can hinder vectorized loads.
- line 59: tanh via exp and a full-precision fp32 division in the epilogue; a fast tanh approximation
  (or exp2-based form) would be cheaper, though this is minor next to the main loop.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
K = 4096


@triton.jit
def matmul_bias_tanh_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wk, stride_wn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_remaining = K - k0
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_remaining) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    y = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_bias_tanh(x, w, b):
    assert x.dtype == torch.float16 and w.dtype == torch.float16
    M_, K_ = x.shape
    K2, N_ = w.shape
    assert K_ == K2
    y = torch.empty((M_, N_), device=x.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_K = 32
    grid = (triton.cdiv(M_, BLOCK_M), triton.cdiv(N_, BLOCK_N))
    matmul_bias_tanh_kernel[grid](
        x, w, b, y,
        M_, N_, K_,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(in_features, out_features) / math.sqrt(in_features)).to(torch.float16))
        self.bias = nn.Parameter(torch.randn(out_features).to(torch.float16))

    def forward(self, x):
        return torch.tanh(x @ self.weight + self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(in_features, out_features) / math.sqrt(in_features)).to(torch.float16))
        self.bias = nn.Parameter(torch.randn(out_features).to(torch.float16))

    def forward(self, x):
        return matmul_bias_tanh(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(M, K).to(torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 37, "N": 71, "K": 129},
    {"M": 129, "N": 37, "K": 71},
    {"M": 100, "N": 90, "K": 77},
]
