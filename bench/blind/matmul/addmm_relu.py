"""out = relu(beta * C + A @ B); A (M, K), B (K, N), C (M, N), fp32; beta is a float constructor argument.

One program per BLOCK_M x BLOCK_N output tile, fp32 accumulation with tl.dot over K; C is read once in the
epilogue. The dot runs with input_precision="ieee" so it rounds like torch's default fp32 matmul (no TF32).

Known problems:
- lines 45-47: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- line 48: fp32 tl.dot in "ieee" precision runs on the FMA units, not on tensor cores (TF32 would be several times faster but rounds differently from torch's default fp32 matmul)
- lines 63-64, 74: one fixed 64x64x32 tile with 4 warps and the default num_stages; with M = N = 1024 that is only 256 programs (about two 4-warp programs per SM) each running a 128-step K loop, and there is no split-K to add parallelism
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 1024
N = 1024
K = 4096
BETA = 0.75


@triton.jit
def addmm_relu_kernel(
    a_ptr, b_ptr, c_ptr, out_ptr,
    M, N, K,
    beta,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    stride_om, stride_on,
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
    c = tl.load(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, mask=mask, other=0.0)
    out = tl.maximum(beta * c + acc, 0.0)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on, out, mask=mask)


def addmm_relu(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, beta: float) -> torch.Tensor:
    m, k = a.shape
    k2, n = b.shape
    assert k == k2 and c.shape == (m, n)
    out = torch.empty((m, n), device=a.device, dtype=a.dtype)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    addmm_relu_kernel[grid](
        a, b, c, out,
        m, n, k,
        beta,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=4,
    )
    return out


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, c, a, b):
        return torch.relu(torch.addmm(c, a, b, beta=self.beta))


class ModelNew(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, c, a, b):
        return addmm_relu(c, a, b, self.beta)


def get_inputs():
    c = torch.randn(M, N)
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    return [c, a, b]


def get_init_inputs():
    return [BETA]


TEST_SHAPES = [
    {"M": 37, "N": 129, "K": 71},
    {"M": 64, "N": 64, "K": 160},
]
