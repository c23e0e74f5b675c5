"""Linear + bias + GELU (tanh approximation), bf16.

Computes y = F.gelu(x @ W^T + b, approximate="tanh") where W, b belong to an
nn.Linear(K, N) held in bf16.

Shapes / dtypes:
    x: (M, K) bf16
    W: (N, K) bf16, b: (N,) bf16
    y: (M, N) bf16
Benchmark shape: M=2048, K=4096, N=4096.

Known problems:
- Plain 2D launch grid with no grouped (swizzled) tile ordering, so L2 reuse of
  x / W tiles across neighbouring programs is left to chance.
- Block sizes (128x128x32, 8 warps, 3 stages) are a fixed guess, not tuned for
  the GPU or the shape; no autotuning.
- W is read through a transposed view (K-major tiles of a row-major (N, K)
  matrix) without any thought about the best operand layout for the MMA path.
- The epilogue computes tanh via exp (1 - 2/(exp(2u)+1)) instead of a fast
  hardware tanh.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 2048
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.linear(x), approximate="tanh")


@triton.jit
def _linear_bias_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    Mdim, Ndim, Kdim,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    # W^T tile: element (k, n) = W[n, k]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, Kdim, BLOCK_K):
        k_mask = (k0 + offs_k) < Kdim
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < Mdim) & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < Ndim), other=0.0)
        if DOT_FP32:
            a = a.to(tl.float32)
            w = w.to(tl.float32)
        acc = tl.dot(a, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < Ndim, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    # gelu tanh: 0.5 * z * (1 + tanh(sqrt(2/pi) * (z + 0.044715 z^3)))
    u = 0.7978845608028654 * (z + 0.044715 * z * z * z)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    y = 0.5 * z * (1.0 + t)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    y_mask = (offs_m[:, None] < Mdim) & (offs_n[None, :] < Ndim)
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=y_mask)


def linear_bias_gelu_tanh(x, weight, bias):
    assert x.dim() == 2 and weight.dim() == 2
    Mx, Kx = x.shape
    Nw, Kw = weight.shape
    assert Kx == Kw
    y = torch.empty((Mx, Nw), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
    _linear_bias_gelu_kernel[grid](
        x, weight, bias, y,
        Mx, Nw, Kx,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        DOT_FP32=os.environ.get("TRITON_INTERPRET") == "1",
        num_warps=8, num_stages=3,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        return linear_bias_gelu_tanh(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 64},
    {"M": 37, "K": 100, "N": 129},
    {"M": 129, "K": 45, "N": 70},
]
