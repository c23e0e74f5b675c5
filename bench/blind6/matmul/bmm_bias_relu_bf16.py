"""Batched matmul + per-batch bias + ReLU, bf16.

Computes relu(torch.bmm(A, Bm) + bias[:, None, :]) with
A (B, M, K), Bm (B, K, N), bias (B, N), all bf16; output (B, M, N) bf16.
Benchmark shape: B=16, M=1024, K=1024, N=1024.

Known problems:
- lines 86-87, 95: fixed 64x64x32 tiles with default num_warps/num_stages and no autotuning; 64x64 tiles have low arithmetic intensity for bf16 tensor cores and BLOCK_K=32 is short for Hopper pipelining.
- line 87: grid walks tiles in plain (m, n, batch) order with no grouped/swizzled ordering, so B tiles of a batch are re-fetched by every M row of tiles with little L2 reuse.
- lines 60-65: the K loop recomputes full pointer grids and applies M/N/K masks on every iteration even though the benchmark K is a multiple of BLOCK_K.
- lines 87-98: non-persistent launch of 16x16x16 = 4096 small tiles with no TMA / warp-specialized (wgmma) schedule, so each tile pays prologue/epilogue and load latency separately.
"""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 16
M = 1024
K = 1024
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, Bm, bias):
        return torch.relu(torch.bmm(A, Bm) + bias[:, None, :])


_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


@triton.jit
def bmm_bias_relu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_biasb, stride_biasn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_base = a_ptr + pid_b * stride_ab
    b_base = b_ptr + pid_b * stride_bb

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_base + offs_m[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_base + kk[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        if UPCAST_DOT:
            # Triton's CPU interpreter mis-multiplies bf16 tl.dot operands.
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc += tl.dot(a, b)

    bias = tl.load(bias_ptr + pid_b * stride_biasb + offs_n * stride_biasn,
                   mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = tl.maximum(acc, 0.0)

    c_ptrs = c_ptr + pid_b * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm_bias_relu(A, Bm, bias):
    Bsz, Mdim, Kdim = A.shape
    Ndim = Bm.shape[2]
    C = torch.empty((Bsz, Mdim, Ndim), device=A.device, dtype=A.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(Mdim, BLOCK_M), triton.cdiv(Ndim, BLOCK_N), Bsz)
    bmm_bias_relu_kernel[grid](
        A, Bm, bias, C,
        Mdim, Ndim, Kdim,
        A.stride(0), A.stride(1), A.stride(2),
        Bm.stride(0), Bm.stride(1), Bm.stride(2),
        bias.stride(0), bias.stride(1),
        C.stride(0), C.stride(1), C.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        UPCAST_DOT=_INTERPRET,
    )
    return C


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, Bm, bias):
        return bmm_bias_relu(A, Bm, bias)


def get_inputs():
    A = torch.randn(B, M, K, dtype=torch.bfloat16)
    Bm = torch.randn(B, K, N, dtype=torch.bfloat16)
    bias = torch.randn(B, N, dtype=torch.bfloat16)
    return [A, Bm, bias]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "M": 64, "K": 64, "N": 64},
    {"B": 3, "M": 37, "K": 100, "N": 129},
]
