"""out = alpha * (A @ B) + R; A (M, K), B (K, N), R (M, N), fp32; alpha is a float constructor argument.

One program per BLOCK_M x BLOCK_N output tile, fp32 accumulation with tl.dot over K, then the scale and the residual
add in the epilogue. The dot runs with input_precision="ieee" so that it rounds like torch's default fp32 matmul
(no TF32).

Known problems:
- lines 46-48: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- line 49: fp32 tl.dot in "ieee" precision runs on the FMA units, not on tensor cores (TF32 would be several times faster but rounds differently from torch's default fp32 matmul)
- lines 64, 75: one fixed 64x64x32 tile with 4 warps and the default num_stages, chosen without tuning for the H200
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 2048
N = 2048
K = 2048
ALPHA = 0.5


@triton.jit
def matmul_scale_residual_kernel(
    a_ptr, b_ptr, r_ptr, c_ptr,
    M, N, K,
    alpha,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_rm, stride_rn,
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
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    r = tl.load(r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn, mask=mask, other=0.0)
    out = alpha * acc + r
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, out, mask=mask)


def matmul_scale_residual(a: torch.Tensor, b: torch.Tensor, r: torch.Tensor, alpha: float) -> torch.Tensor:
    m, k = a.shape
    k2, n = b.shape
    assert k == k2 and r.shape == (m, n)
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    matmul_scale_residual_kernel[grid](
        a, b, r, c,
        m, n, k,
        alpha,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        r.stride(0), r.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=4,
    )
    return c


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b, r):
        return self.alpha * (a @ b) + r


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b, r):
        return matmul_scale_residual(a, b, r, self.alpha)


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    r = torch.randn(M, N)
    return [a, b, r]


def get_init_inputs():
    return [ALPHA]


TEST_SHAPES = [
    {"M": 37, "N": 129, "K": 71},
    {"M": 64, "N": 96, "K": 128},
]
