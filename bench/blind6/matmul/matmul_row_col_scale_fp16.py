"""Matmul with per-row and per-column scaling.

Computes out = ((A @ B).float() * row_scale[:, None] * col_scale[None, :]).half()
for A (M=4096, K=4096) fp16, B (K=4096, N=4096) fp16, row_scale (M,) fp32,
col_scale (N,) fp32. Output (M, N) fp16.

Known problems:
- lines 31-32, 64: tiles are launched in plain row-major (pid_m, pid_n) order with no grouped/swizzled ordering, so programs resident at the same time share few A/B tiles in L2 (32x32 tile grid at 4096^3).
- lines 39-47, 63, 65: one fixed 128x128x32 tile with the default num_warps=4 / num_stages and no autotuning; a 128x128 fp32 accumulator on 4 warps is 128 registers per thread, and BLOCK_K=32 gives short K steps for the load pipeline.
- lines 43-46: K-boundary masks are built and applied on every K iteration, although only the last one can be partial (none at K=4096).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
K = 4096
N = 4096


@triton.jit
def matmul_scale_kernel(
    a_ptr, b_ptr, rs_ptr, cs_ptr, c_ptr,
    M, N, K,
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

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + kk[None, :] * stride_ak
        b_ptrs = b_ptr + kk[:, None] * stride_bk + offs_n[None, :] * stride_bn
        a_mask = (offs_m[:, None] < M) & (kk[None, :] < K)
        b_mask = (kk[:, None] < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        acc += tl.dot(a, b)

    rs = tl.load(rs_ptr + offs_m, mask=offs_m < M, other=0.0)
    cs = tl.load(cs_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc * rs[:, None] * cs[None, :]

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)


def matmul_row_col_scale(a, b, row_scale, col_scale):
    Mv, Kv = a.shape
    Kb, Nv = b.shape
    assert Kv == Kb
    c = torch.empty((Mv, Nv), device=a.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(Mv, BLOCK_M), triton.cdiv(Nv, BLOCK_N))
    matmul_scale_kernel[grid](
        a, b, row_scale, col_scale, c,
        Mv, Nv, Kv,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return c


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, row_scale, col_scale):
        return ((A @ B).float() * row_scale[:, None] * col_scale[None, :]).half()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, row_scale, col_scale):
        return matmul_row_col_scale(A, B, row_scale, col_scale)


def get_inputs():
    A = torch.randn(M, K, dtype=torch.float16)
    B = torch.randn(K, N, dtype=torch.float16)
    row_scale = torch.rand(M, dtype=torch.float32) + 0.5
    col_scale = torch.rand(N, dtype=torch.float32) + 0.5
    return [A, B, row_scale, col_scale]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 128, "K": 64, "N": 128},
    {"M": 100, "K": 37, "N": 129},
]
