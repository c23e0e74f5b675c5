"""out = A @ B.T with A (M, K) and B given as (N, K), fp16 in and out, fp32 accumulation.

B is read through its strides as a (K, N) view, so no transposed copy is made: each K-step loads a
BLOCK_K x BLOCK_N tile of B^T whose fastest-moving index (k) is B's contiguous dimension.

Known problems:
- lines 31-32, 60: plain row-major 2D program order (no grouped / swizzled tile order), so concurrently running programs share few B tiles in L2
- lines 43-45: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- lines 59, 68: one fixed 64x64x32 tile with 4 warps and the default num_stages, small for H200 tensor cores (no autotuning)
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
K = 4096


@triton.jit
def matmul_bt_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bn, stride_bk,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    # (BLOCK_K, BLOCK_N) tile of B^T, i.e. rows offs_n / columns offs_k of B
    bt_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        bt = tl.load(bt_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, bt)
        a_ptrs += BLOCK_K * stride_ak
        bt_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_transposed_b(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.shape
    n, k2 = b.shape
    assert k == k2
    c = torch.empty((m, n), device=a.device, dtype=torch.float16)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    matmul_bt_kernel[grid](
        a, b, c,
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

    def forward(self, a, b):
        return a @ b.T


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul_transposed_b(a, b)


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(N, K, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 129, "K": 71},
    {"M": 64, "N": 128, "K": 64},
]
