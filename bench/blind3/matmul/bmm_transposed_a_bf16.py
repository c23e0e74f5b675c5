"""Batched matmul with the first operand transposed, bf16.

Computes c = torch.bmm(a.transpose(1, 2), b).
a: (BATCH, K, M) bf16, b: (BATCH, K, N) bf16, c: (BATCH, M, N) bf16, i.e. c[z] = a[z]^T @ b[z].
The Triton version reads a in place through strides (no transposed copy); fp32 accumulate.

Known problems:
- line 69: fixed tile config (128x128x32, 8 warps, 3 stages, no autotuning); BLOCK_K=32 is on the small side for H200
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
K = 2048
M = 1024
N = 1024


@triton.jit
def bmm_at_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_az, stride_ak, stride_am,
                  stride_bz, stride_bk, stride_bn,
                  stride_cz, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # element (m, k) of a[z]^T is a[z, k, m]
    a_ptrs = a_ptr + pid_z * stride_az + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + pid_z * stride_bz + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:  # CPU interpreter only: its tl.dot mishandles bf16 operands
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + pid_z * stride_cz + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm_transposed_a(a, b):
    assert a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0] and a.shape[1] == b.shape[1]
    z, k, m = a.shape
    n = b.shape[2]
    c = torch.empty((z, m, n), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N), z)
    bmm_at_kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        c.stride(0), c.stride(1), c.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        UPCAST=os.environ.get("TRITON_INTERPRET") == "1",
        num_warps=8, num_stages=3,
    )
    return c


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a.transpose(1, 2), b)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return bmm_transposed_a(a, b)


def get_inputs():
    a = torch.randn(BATCH, K, M, dtype=torch.bfloat16)
    b = torch.randn(BATCH, K, N, dtype=torch.bfloat16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "K": 64, "M": 128, "N": 64},
    {"BATCH": 3, "K": 129, "M": 37, "N": 100},
]
