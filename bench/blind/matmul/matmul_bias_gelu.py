"""out = gelu(A @ B + bias) with the exact (erf) GELU; A (M, K), B (K, N), bias (N,), all fp16, output fp16.

The kernel tiles the output into BLOCK_M x BLOCK_N tiles, accumulates A @ B in fp32 with tl.dot over the K
dimension, then adds the bias and applies 0.5 * x * (1 + erf(x / sqrt(2))) before a single rounding to fp16.

Known problems:
- lines 41-45: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- lines 64, 73: one fixed 64x64x32 tile with 4 warps and the default num_stages, small for H200 tensor cores (no autotuning)
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 2048
N = 2048
K = 2048


@triton.jit
def matmul_bias_gelu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] + k0 < K)
        b_mask = (offs_k[:, None] + k0 < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x = acc + bias[None, :]
    out = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, out.to(tl.float16), mask=c_mask)


def matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0] and bias.shape[0] == b.shape[1]
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float16)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    matmul_bias_gelu_kernel[grid](
        a, b, bias, c,
        m, n, k,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=4,
    )
    return c


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return torch.nn.functional.gelu(a @ b + bias)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return matmul_bias_gelu(a, b, bias)


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16) / K ** 0.5
    bias = torch.randn(N, dtype=torch.float16)
    return [a, b, bias]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 129, "K": 71},
    {"M": 64, "N": 64, "K": 64},
]
