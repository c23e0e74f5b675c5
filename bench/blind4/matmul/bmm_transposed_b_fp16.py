"""Batched matmul with a transposed second operand: C = torch.bmm(A, B.transpose(1, 2)).

A is (BATCH, M, K) fp16, B is stored as (BATCH, N, K) fp16, output C is (BATCH, M, N) fp16
(accumulated in fp32).

Known problems:
- L72: fixed 64x64x32 tiles with default num_warps/num_stages and no autotuning; far too small a tile for
  H200 tensor cores (128x128/128x256 with BLOCK_K 64 and 3-4 pipeline stages is the usual starting point).
- L38-40, L73: plain row-major program order over (m, n) tiles, no grouped/swizzled launch order for L2 reuse.
- L51-58: no TMA/descriptor loads or warp specialization; plain pointer loads with masks recomputed every
  K step even though the benchmark shape is a multiple of every block size.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 8
M = 2048
N = 2048
K = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B.transpose(1, 2))


@triton.jit
def bmm_nt_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_ab, stride_am, stride_ak,
                  stride_bb, stride_bn, stride_bk,
                  stride_cb, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    # A tile is (BLOCK_M, BLOCK_K); B is read as its transpose, a (BLOCK_K, BLOCK_N) tile
    a_ptrs = a_ptr + pid_b * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + pid_b * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] + k < K)
        b_mask = (offs_k[:, None] + k < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(tl.float16)
    c_ptrs = c_ptr + pid_b * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def bmm_nt(A, B):
    assert A.dim() == 3 and B.dim() == 3
    batch, m, k = A.shape
    batch_b, n, k_b = B.shape
    assert batch == batch_b and k == k_b
    C = torch.empty((batch, m, n), dtype=A.dtype, device=A.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N), batch)
    bmm_nt_kernel[grid](
        A, B, C, m, n, k,
        A.stride(0), A.stride(1), A.stride(2),
        B.stride(0), B.stride(1), B.stride(2),
        C.stride(0), C.stride(1), C.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return C


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return bmm_nt(A, B)


def get_inputs():
    A = torch.randn(BATCH, M, K, dtype=torch.float16)
    B = torch.randn(BATCH, N, K, dtype=torch.float16)
    return [A, B]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "M": 37, "N": 45, "K": 70},
    {"BATCH": 3, "M": 128, "N": 64, "K": 96},
    {"BATCH": 1, "M": 129, "N": 130, "K": 33},
]
