"""Matmul plus bias, fp32.

Computes out = A @ B + bias with A (M, K) fp32, B (K, N) fp32, bias (N,) fp32,
out (M, N) fp32. Benchmark shape: M = N = K = 2048.

Known problems:
- line 52: input_precision="ieee" keeps the fp32 dot off the tensor cores (plain FMA path); tf32x3 would keep near-fp32 accuracy on tensor cores
- lines 66-67: fixed 64x64x32 tiles with default num_warps/num_stages and no autotuning; small tiles give low data reuse at 2048^3
- lines 37-38, 67: plain row-major 2D launch order with no grouped/swizzled pid mapping, so A and B tiles get poor L2 reuse
- lines 47-50: full M/N/K masks on every K step even for interior tiles (minor)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 2048
N = 2048
K = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return torch.matmul(a, b) + bias


@triton.jit
def matmul_bias_kernel(a_ptr, b_ptr, bias_ptr, c_ptr,
                       M, N, K,
                       stride_am, stride_ak,
                       stride_bk, stride_bn,
                       stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        # full fp32 products, to match the fp32 reference
        acc = tl.dot(a, b, acc, input_precision="ieee")

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc + bias[None, :]

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_bias(a, b, bias):
    assert a.shape[1] == b.shape[0]
    m, k = a.shape
    _, n = b.shape
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    matmul_bias_kernel[grid](
        a, b, bias, c,
        m, n, k,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return matmul_bias(a, b, bias)


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float32)
    b = torch.randn(K, N, dtype=torch.float32)
    bias = torch.randn(N, dtype=torch.float32)
    return [a, b, bias]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 64, "K": 64},
    {"M": 100, "N": 37, "K": 129},
    {"M": 130, "N": 129, "K": 33},
]
