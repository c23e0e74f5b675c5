"""out = torch.bmm(A, B) for bf16 batches A (BATCH, M, K) and B (BATCH, K, N); bf16 output, fp32 accumulation.

The grid is (tiles along M, tiles along N, batch); each program computes one BLOCK_M x BLOCK_N tile of one batch
entry with tl.dot over K.

Known problems:
- lines 44-46: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- lines 64, 74: one fixed 64x64x32 tile with 4 warps and the default num_stages, chosen without tuning for the H200
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
M = 512
N = 512
K = 512


@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_IN_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + pid_b * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + pid_b * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        if DOT_IN_FP32:
            # Triton's CPU interpreter mis-handles bf16 tl.dot operands; bf16 products are exact in fp32
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
        else:
            acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + pid_b * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    batch, m, k = a.shape
    assert b.shape[0] == batch and b.shape[1] == k
    n = b.shape[2]
    c = torch.empty((batch, m, n), device=a.device, dtype=a.dtype)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n), batch)
    bmm_kernel[grid](
        a, b, c,
        m, n, k,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        c.stride(0), c.stride(1), c.stride(2),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        DOT_IN_FP32=a.device.type == "cpu",
        num_warps=4,
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
    a = torch.randn(BATCH, M, K, dtype=torch.bfloat16)
    b = torch.randn(BATCH, K, N, dtype=torch.bfloat16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "M": 37, "N": 129, "K": 71},
    {"BATCH": 2, "M": 64, "N": 64, "K": 96},
]
