"""Compute-bound KernelBench-format module for the H200 benchmark: a bf16 tl.dot matmul (FLOPs derivable
from the recorded argument shapes) against torch's matmul."""

import os

import torch
import triton
import triton.language as tl

SIZE = int(os.environ.get("TL_BENCH_MM", 4096))
DTYPE = getattr(torch, os.environ.get("TL_BENCH_DTYPE", "bfloat16"))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K)
        )
        b = tl.load(
            b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N)
        )
        acc += tl.dot(a, b)
    tl.store(
        c_ptr + rm[:, None] * N + rn[None, :],
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(m, 128), triton.cdiv(n, 128))
        matmul_kernel[grid](a, b, c, m, n, k, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
        return c


def get_inputs():
    return [torch.randn(SIZE, SIZE).to(DTYPE), torch.randn(SIZE, SIZE).to(DTYPE)]


def get_init_inputs():
    return []
