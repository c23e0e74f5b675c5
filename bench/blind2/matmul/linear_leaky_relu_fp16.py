"""y = leaky_relu(x @ W.T + b, 0.01): x (M, K) fp16, W (N, K) fp16 (nn.Linear layout), b (N,) fp16 -> y (M, N) fp16.

One Triton program computes one BLOCK_M x BLOCK_N tile of y on a 2D grid. W keeps its (N, K) nn.Linear storage
and is read as W^T tiles (BLOCK_K, BLOCK_N) through swapped strides; x tiles are (BLOCK_M, BLOCK_K). tl.dot
accumulates in fp32, then the epilogue adds the bias, applies leaky ReLU (slope 0.01) and stores fp16.

Known problems:
- line 72: plain 2D grid with no grouped (super-tile) ordering, so L2 reuse of x and W panels is poor for a
  4096 x 8192 x 4096 problem.
- lines 69-71: fixed 64x64x32 tiles, default num_warps=4 / num_stages, no autotune; much smaller
  tiles and shallower pipelining than an H200 fp16 GEMM needs.
- lines 50-51: K-edge masks evaluated on every iteration instead of only on the tail.
- line 56: the bias is loaded in the epilogue after the K loop, so its latency is exposed (minor).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 4096
N = 8192
K = 4096
NEGATIVE_SLOPE = 0.01


@triton.jit
def linear_leaky_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K, negative_slope,
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

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    wt_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        wt = tl.load(wt_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, wt)
        x_ptrs += BLOCK_K * stride_xk
        wt_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    z = acc + bias.to(tl.float32)[None, :]
    y = tl.where(z >= 0, z, z * negative_slope)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear_leaky_relu(x, weight, bias, negative_slope):
    M_, K_ = x.shape
    N_, K2 = weight.shape
    assert K_ == K2
    y = torch.empty((M_, N_), device=x.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_K = 32
    grid = (triton.cdiv(M_, BLOCK_M), triton.cdiv(N_, BLOCK_N))
    linear_leaky_relu_kernel[grid](
        x, weight, bias, y,
        M_, N_, K_, negative_slope,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(out_features, in_features) / math.sqrt(in_features)).to(torch.float16))
        self.bias = nn.Parameter(torch.randn(out_features).to(torch.float16))

    def forward(self, x):
        return F.leaky_relu(F.linear(x, self.weight, self.bias), NEGATIVE_SLOPE)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(out_features, in_features) / math.sqrt(in_features)).to(torch.float16))
        self.bias = nn.Parameter(torch.randn(out_features).to(torch.float16))

    def forward(self, x):
        return linear_leaky_relu(x, self.weight, self.bias, NEGATIVE_SLOPE)


def get_inputs():
    return [torch.randn(M, K).to(torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 37, "N": 71, "K": 129},
    {"M": 129, "N": 37, "K": 71},
    {"M": 100, "N": 90, "K": 77},
]
