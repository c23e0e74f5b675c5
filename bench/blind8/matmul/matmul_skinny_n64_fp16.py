"""Tall-skinny matrix multiply: y = x @ W with x (M, K) fp16 and W (K, 64) fp16, both forward inputs; y is (M, 64) fp16.

Benchmark shape: M = 65536, K = 512, N = 64. The Triton version tiles over rows (and, generically, over N),
accumulates in fp32 and casts to fp16 at the store.

Known problems:
- ModelNew.forward launch: fixed BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, default num_stages; no autotuning. With M=65536 the small BLOCK_M gives 1024 programs each doing only a 64x64 output tile, so the per-program K loop (16 iterations) has little work to hide load latency.
- _matmul_skinny_kernel K loop: the whole W (512x64, 64 KB) is re-read from L2 by every one of the 1024 programs in BLOCK_K slices instead of being kept resident / loaded once per program with a larger BLOCK_K; the kernel is memory-bound on streaming x, and this extra traffic is not needed.
- _matmul_skinny_kernel K loop: both loads are masked with k_mask on every iteration even though K is a multiple of BLOCK_K.
- _matmul_skinny_kernel: generic 2-D (pid_m, pid_n) program mapping and n-masking kept even though N=64 fits in one BLOCK_N tile; no split-K or persistent scheduling considered.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

M_SIZE = 65536
K_SIZE = 512
N_SIZE = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.matmul(x, w)


@triton.jit
def _matmul_skinny_kernel(
    x_ptr, w_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wk, stride_wn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
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
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + k_idx[None, :] * stride_xk,
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(w_ptr + k_idx[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(a, b)

    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             acc.to(tl.float16), mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        _matmul_skinny_kernel[grid](
            x, w, y,
            M, N, K,
            x.stride(0), x.stride(1),
            w.stride(0), w.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=4,
        )
        return y


def get_inputs():
    x = torch.randn(M_SIZE, K_SIZE, dtype=torch.float16)
    w = torch.randn(K_SIZE, N_SIZE, dtype=torch.float16)
    return [x, w]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M_SIZE": 256, "K_SIZE": 64, "N_SIZE": 64},
    {"M_SIZE": 211, "K_SIZE": 50, "N_SIZE": 70},
]
