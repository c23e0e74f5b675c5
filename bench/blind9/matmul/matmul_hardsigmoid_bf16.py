"""C = torch.nn.functional.hardsigmoid(A @ B) with A (M, K) and B (K, N) in bf16, fp32 accumulation.

Known problems:
- Fixed block sizes (128x128x64) and num_warps/num_stages, no autotune.
- No grouped/swizzled program ordering for L2 reuse.
- No TMA / persistent or warp-specialized schedule.
- Masked loads on every K step even when K is a multiple of BLOCK_K.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 2048
K = 8192
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.nn.functional.hardsigmoid(A @ B)


@triton.jit
def _matmul_hardsigmoid_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & mask_n[None, :], other=0.0)
        if DOT_FP32:
            # CPU interpreter only: its bf16 dot is unreliable
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    out = tl.minimum(tl.maximum(acc * (1.0 / 6.0) + 0.5, 0.0), 1.0)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, out.to(tl.bfloat16), mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        Ma, Ka = A.shape
        Nb = B.shape[1]
        C = torch.empty((Ma, Nb), dtype=torch.bfloat16, device=A.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
        grid = (triton.cdiv(Ma, BLOCK_M), triton.cdiv(Nb, BLOCK_N))
        _matmul_hardsigmoid_kernel[grid](
            A, B, C,
            Ma, Nb, Ka,
            A.stride(0), A.stride(1),
            B.stride(0), B.stride(1),
            C.stride(0), C.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            DOT_FP32=(A.device.type == "cpu"),
            num_warps=8, num_stages=3,
        )
        return C


def get_inputs():
    # scaled so A @ B has unit variance and hardsigmoid is not fully saturated
    A = (torch.randn(M, K) / (K ** 0.5)).to(torch.bfloat16)
    B = torch.randn(K, N, dtype=torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "K": 128, "N": 96},
    {"M": 130, "K": 100, "N": 70},
    {"M": 90, "K": 200, "N": 140},
]
