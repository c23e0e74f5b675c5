"""C = A @ B (batched): A (BATCH, M, K) fp16, B (BATCH, K, N) fp16 -> C (BATCH, M, N) fp16, fp32 accumulation.

A 3D grid (m tiles, n tiles, batch) launches one program per BLOCK_M x BLOCK_N tile of one batch entry. Each program
offsets its A/B/C base pointers by the batch stride, then runs a standard K loop of masked tile loads and tl.dot
into an fp32 accumulator, and stores the tile as fp16.

Known problems:
- line 69: batch on grid axis 2 and tiles in plain row-major order, no grouped ordering; L2 reuse of B tiles
  within a batch entry is left to chance.
- lines 66-68: fixed 64x64x32 tiles and default num_warps / num_stages, no autotune; small for H200
  tensor cores at 1024^3 per batch.
- lines 51-52: K-edge masks recomputed on every K iteration instead of only for the tail.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
M = 1024
N = 1024
K = 1024


@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    a_ptr += pid_b * stride_ab
    b_ptr += pid_b * stride_bb
    c_ptr += pid_b * stride_cb

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm(a, b):
    Bt, M_, K_ = a.shape
    Bt2, K2, N_ = b.shape
    assert Bt == Bt2 and K_ == K2
    c = torch.empty((Bt, M_, N_), device=a.device, dtype=torch.float16)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_K = 32
    grid = (triton.cdiv(M_, BLOCK_M), triton.cdiv(N_, BLOCK_N), Bt)
    bmm_kernel[grid](
        a, b, c,
        M_, N_, K_,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        c.stride(0), c.stride(1), c.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return c


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return bmm(a, b)


def get_inputs():
    a = (torch.randn(BATCH, M, K) / K ** 0.5).to(torch.float16)
    b = torch.randn(BATCH, K, N).to(torch.float16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "M": 37, "N": 71, "K": 129},
    {"BATCH": 2, "M": 129, "N": 37, "K": 71},
    {"BATCH": 5, "M": 100, "N": 90, "K": 77},
]
