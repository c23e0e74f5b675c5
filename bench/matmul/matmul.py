"""C = A @ B for fp16 A (M, K) and B (K, N), fp32 accumulation, fp16 output.

Known problems:
- lines 33-36: a loop over K of rank-1 updates (outer products): no tl.dot, no tensor cores
- line 34: the A column load is strided by K: uncoalesced
- lines 26-27: a 2D grid in row-major program order: no grouping for L2 reuse
- line 55: 32x32 tiles with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
K = 4096
TEST_SHAPES = [{"M": 64, "N": 64, "K": 32}, {"M": 50, "N": 37, "K": 29}]


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + offs_m * stride_am + k * stride_ak, mask=mask_m, other=0.0)
        b = tl.load(b_ptr + k * stride_bk + offs_n * stride_bn, mask=mask_n, other=0.0)
        acc += a[:, None].to(tl.float32) * b[None, :].to(tl.float32)
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=mask_m[:, None] & mask_n[None, :])


class Model(nn.Module):
    def forward(self, a, b):
        return (a.float() @ b.float()).to(a.dtype)


class ModelNew(nn.Module):
    def forward(self, a, b):
        m, k = a.shape
        _, n = b.shape
        c = torch.empty(m, n, dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
        matmul_kernel[grid](
            a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=32, BLOCK_N=32,
        )
        return c


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
