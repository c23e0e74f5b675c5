"""Matmul followed by ELU, fp16.

Computes y = F.elu(a @ b) (alpha = 1.0).

Shapes / dtypes:
    a: (M, K) fp16
    b: (K, N) fp16
    y: (M, N) fp16
Benchmark shape: M = N = K = 2048.

Known problems:
- Plain 2D launch grid with no grouped (swizzled) tile ordering, so L2 reuse
  between neighbouring programs is not arranged for.
- Fixed untuned block sizes (128x128x32, 8 warps, 3 stages); with M=N=2048
  that is only 256 tiles, about two waves on an H100, with a partial tail.
- Masks are applied on every K-step load even when the shape divides the
  block sizes evenly.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 2048
K = 2048
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return F.elu(a @ b)


@triton.jit
def _matmul_elu_kernel(
    a_ptr, b_ptr, c_ptr,
    Mdim, Ndim, Kdim,
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
    for k0 in range(0, Kdim, BLOCK_K):
        k_mask = (k0 + offs_k) < Kdim
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < Mdim) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < Ndim), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # ELU with alpha = 1: x if x > 0 else exp(x) - 1
    y = tl.where(acc > 0, acc, tl.exp(tl.minimum(acc, 0.0)) - 1.0)

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < Mdim) & (offs_n[None, :] < Ndim)
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=c_mask)


def matmul_elu(a, b):
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0]
    Ma, Ka = a.shape
    Nb = b.shape[1]
    c = torch.empty((Ma, Nb), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(Ma, BLOCK_M), triton.cdiv(Nb, BLOCK_N))
    _matmul_elu_kernel[grid](
        a, b, c,
        Ma, Nb, Ka,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul_elu(a, b)


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 64},
    {"M": 37, "K": 100, "N": 129},
    {"M": 129, "K": 45, "N": 70},
]
