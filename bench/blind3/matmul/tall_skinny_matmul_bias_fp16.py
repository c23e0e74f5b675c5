"""Tall-skinny matmul plus bias, fp16.

Computes y = x @ w + bias.
x: (M, K) fp16 with M >> K (65536 x 64), w: (K, N) fp16 parameter (64 x 256), bias: (N,) fp16 parameter.
y: (M, N) fp16. Memory-bound (reads x once, writes y); the Triton version is a tiled matmul with the bias add
fused into the epilogue and fp32 accumulate.

Known problems:
- line 56: fixed tile config (128x128x32, 8 warps, 3 stages, no autotuning) chosen as for a square matmul
- line 56: BLOCK_N=128 < N=256, so every x row tile is loaded by two programs; with K=64 the whole K (and a full-N tile) would fit in one step
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 65536
K = 64
N = 256


@triton.jit
def matmul_bias_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wk, stride_wn, stride_ym, stride_yn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    out = acc + bias[None, :]

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_bias(x, w, bias):
    assert x.dim() == 2 and w.dim() == 2 and x.shape[1] == w.shape[0] and bias.shape[0] == w.shape[1]
    m, k = x.shape
    n = w.shape[1]
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    matmul_bias_kernel[grid](
        x, w, bias, y, m, n, k,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features, dtype=torch.float16) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features, dtype=torch.float16))

    def forward(self, x):
        return x @ self.weight + self.bias


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features, dtype=torch.float16) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features, dtype=torch.float16))

    def forward(self, x):
        return matmul_bias(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 256, "K": 64, "N": 256},
    {"M": 1000, "K": 37, "N": 129},
]
