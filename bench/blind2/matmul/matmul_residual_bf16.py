"""y = x @ W + residual: x (M, K) bf16, W (K, N) bf16 parameter, residual (M, N) bf16 -> y (M, N) bf16, fp32 accumulate.

One Triton program per BLOCK_M x BLOCK_N output tile on a 2D grid. The K loop loads masked x and W tiles and
accumulates tl.dot in fp32; after the loop the matching residual tile is loaded, added in fp32, and the sum is
rounded once to bf16 and stored.

Known problems:
- line 72: 2D grid without grouped (super-tile) ordering; poor L2 reuse of W panels at 4096^3.
- lines 69-71: fixed 64x64x32 tiles, default num_warps=4 and num_stages, no autotune; tensor cores are
  badly under-fed at this tile size on H200.
- lines 49-50: full K-edge masks on every iteration instead of an unmasked main loop plus a tail.
- line 57: the residual tile is loaded only after the K loop, so its HBM latency is fully exposed in the
  epilogue instead of being overlapped with the main loop (minor).
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
def matmul_residual_kernel(
    x_ptr, w_ptr, r_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wk, stride_wn,
    stride_rm, stride_rn,
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
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    r_ptrs = r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn
    r = tl.load(r_ptrs, mask=out_mask, other=0.0)
    y = acc + r.to(tl.float32)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(tl.bfloat16), mask=out_mask)


def matmul_residual(x, w, residual):
    M_, K_ = x.shape
    K2, N_ = w.shape
    assert K_ == K2 and residual.shape == (M_, N_)
    y = torch.empty((M_, N_), device=x.device, dtype=torch.bfloat16)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_K = 32
    grid = (triton.cdiv(M_, BLOCK_M), triton.cdiv(N_, BLOCK_N))
    matmul_residual_kernel[grid](
        x, w, residual, y,
        M_, N_, K_,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(1),
        residual.stride(0), residual.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(in_features, out_features) / math.sqrt(in_features)).to(torch.bfloat16))

    def forward(self, x, residual):
        return x @ self.weight + residual


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(in_features, out_features) / math.sqrt(in_features)).to(torch.bfloat16))

    def forward(self, x, residual):
        return matmul_residual(x, self.weight, residual)


def get_inputs():
    x = torch.randn(M, K).to(torch.bfloat16)
    residual = torch.randn(M, N).to(torch.bfloat16)
    return [x, residual]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 37, "N": 71, "K": 129},
    {"M": 129, "N": 37, "K": 71},
    {"M": 100, "N": 90, "K": 77},
]
