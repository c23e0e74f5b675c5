"""Matrix multiply followed by exact (erf) GELU: y = gelu(a @ b), gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))).

a is (M, K) bf16, b is (K, N) bf16, both are forward inputs; y is (M, N) bf16.
The Triton version accumulates the product in fp32, applies the erf GELU in fp32 on the accumulator
and casts to bf16 once at the store.

Known problems:
- ModelNew.forward launch: fixed BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=4, default num_stages; no autotuning for the 2048x3072x6144 shape.
- _matmul_gelu_erf_kernel program-id mapping (pid_m = pid // num_pid_n): row-major tile order without grouping, so the 3072x6144 b matrix gets little L2 reuse between concurrently running programs.
- _matmul_gelu_erf_kernel K loop: both tl.load calls are masked with k_mask on every iteration although K=3072 is a multiple of BLOCK_K.
- _matmul_gelu_erf_kernel epilogue: tl.math.erf is evaluated on the full fp32 (BLOCK_M, BLOCK_N) tile in registers at the end with no overlap with the next tile's loads (non-persistent kernel), and the output is stored with a plain masked tl.store rather than TMA.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

M_SIZE = 2048
K_SIZE = 3072
N_SIZE = 6144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return F.gelu(torch.matmul(a, b), approximate="none")


@triton.jit
def _matmul_gelu_erf_kernel(
    a_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    INTERP_UPCAST: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < M
    n_mask = offs_n < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_idx = k0 + offs_k
        k_mask = k_idx < K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + k_idx[None, :] * stride_ak,
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(b_ptr + k_idx[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        if INTERP_UPCAST:
            # the CPU interpreter computes bf16 tl.dot wrongly; upcast there (exact). GPU path: native bf16 dot.
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc += tl.dot(a, b)

    # exact GELU in fp32
    y = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(tl.bfloat16), mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        y = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        _matmul_gelu_erf_kernel[grid](
            a, b, y,
            M, N, K,
            a.stride(0), a.stride(1),
            b.stride(0), b.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            INTERP_UPCAST=(a.device.type == "cpu"),
            num_warps=4,
        )
        return y


def get_inputs():
    a = torch.randn(M_SIZE, K_SIZE, dtype=torch.bfloat16)
    b = torch.randn(K_SIZE, N_SIZE, dtype=torch.bfloat16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M_SIZE": 128, "K_SIZE": 64, "N_SIZE": 256},
    {"M_SIZE": 97, "K_SIZE": 70, "N_SIZE": 150},
]
