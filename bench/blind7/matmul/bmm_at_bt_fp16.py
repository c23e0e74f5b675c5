"""Batched matmul with both operands transposed, fp16.

Computes out[i] = a[i]^T @ b[i]^T, i.e.
    torch.bmm(a.transpose(1, 2), b.transpose(1, 2)).
The inputs are contiguous as given; the transposes are logical (handled
through strides, never materialised).

Shapes / dtypes:
    a:   (B, K, M) fp16
    b:   (B, N, K) fp16
    out: (B, M, N) fp16
Benchmark shape: B=16, M = N = K = 512.

Known problems:
- Both operands are read "against the grain": the A tile is gathered with M
  contiguous but loaded as (M, K), and the B tile with K contiguous but loaded
  as (K, N); no thought was given to which layout the MMA path prefers.
- Fixed untuned 64x64x32 tiles (4 warps, 3 stages); each 512^3 problem is
  small, and no attempt is made to pick tile sizes for B*tiles vs SM count.
- No grouped/swizzled ordering of tiles within a batch for L2 reuse.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 16
M = 512
N = 512
K = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a.transpose(1, 2), b.transpose(1, 2))


@triton.jit
def _bmm_at_bt_kernel(
    a_ptr, b_ptr, c_ptr,
    Mdim, Ndim, Kdim,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_base = a_ptr + pid_b.to(tl.int64) * stride_ab
    b_base = b_ptr + pid_b.to(tl.int64) * stride_bb
    c_base = c_ptr + pid_b.to(tl.int64) * stride_cb

    # logical A (M, K) and logical B (K, N), strides chosen by the wrapper
    a_ptrs = a_base + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_base + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, Kdim, BLOCK_K):
        k_mask = (k0 + offs_k) < Kdim
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < Mdim) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < Ndim), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_base + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < Mdim) & (offs_n[None, :] < Ndim)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def bmm_at_bt(a, b):
    assert a.dim() == 3 and b.dim() == 3
    Bn, Ka, Ma = a.shape
    Bb, Nb, Kb = b.shape
    assert Bn == Bb and Ka == Kb
    c = torch.empty((Bn, Ma, Nb), device=a.device, dtype=a.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(Ma, BLOCK_M), triton.cdiv(Nb, BLOCK_N), Bn)
    _bmm_at_bt_kernel[grid](
        a, b, c,
        Ma, Nb, Ka,
        # A^T[m, k] = a[k, m]
        a.stride(0), a.stride(2), a.stride(1),
        # B^T[k, n] = b[n, k]
        b.stride(0), b.stride(2), b.stride(1),
        c.stride(0), c.stride(1), c.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4, num_stages=3,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return bmm_at_bt(a, b)


def get_inputs():
    a = torch.randn(B, K, M, dtype=torch.float16)
    b = torch.randn(B, N, K, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "M": 64, "N": 64, "K": 64},
    {"B": 3, "M": 37, "N": 100, "K": 45},
    {"B": 2, "M": 129, "N": 70, "K": 33},
]
