"""Batched matmul + scale, fp16.

Computes out = (A @ B) * 0.125 with A (BATCH, M, K) and B (BATCH, K, N) fp16
inputs; out is (BATCH, M, N) fp16. The Triton kernel runs one program per
(M-tile, N-tile, batch), accumulates the dot in fp32 and applies the scale in
the epilogue before the fp16 store.

Benchmark shape: BATCH=16, M=1024, K=512, N=1024.

Known problems:
- L82-L82: fixed 64x64x32 tiles, no autotuning; small tiles for an H200 (low data reuse per tile, many tiles).
- L47-L49: plain 3D launch grid (L83) with no grouped/swizzled tile ordering within a batch, so L2 reuse of A and B tiles is poor.
- L84-L92: default num_warps/num_stages at launch, not tuned for the tile shape.
- L63-L66: K-tail masks are applied on every K iteration even though K is a multiple of BLOCK_K at the benchmark shape.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
M = 1024
K = 512
N = 1024

SCALE = 0.125


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B) * SCALE


@triton.jit
def bmm_scaled_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
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
        k = k0 + offs_k
        a_ptrs = a_base + offs_m[:, None] * stride_am + k[None, :] * stride_ak
        b_ptrs = b_base + k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        a_mask = (offs_m[:, None] < M) & (k[None, :] < K)
        b_mask = (k[:, None] < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        acc += tl.dot(a, b)

    c = acc * scale

    c_ptrs = c_ptr + pid_b * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c.to(tl.float16), mask=c_mask)


def bmm_scaled(A, B, scale=SCALE):
    assert A.dim() == 3 and B.dim() == 3
    Ba, Ma, Ka = A.shape
    Bb, Kb, Nb = B.shape
    assert Ba == Bb and Ka == Kb
    C = torch.empty((Ba, Ma, Nb), device=A.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(Ma, BLOCK_M), triton.cdiv(Nb, BLOCK_N), Ba)
    bmm_scaled_kernel[grid](
        A, B, C,
        Ma, Nb, Ka,
        A.stride(0), A.stride(1), A.stride(2),
        B.stride(0), B.stride(1), B.stride(2),
        C.stride(0), C.stride(1), C.stride(2),
        scale,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return C


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return bmm_scaled(A, B)


def get_inputs():
    A = torch.randn(BATCH, M, K, dtype=torch.float16)
    B = torch.randn(BATCH, K, N, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "M": 64, "K": 64, "N": 64},
    {"BATCH": 3, "M": 37, "K": 129, "N": 75},
    {"BATCH": 1, "M": 130, "K": 96, "N": 33},
]
