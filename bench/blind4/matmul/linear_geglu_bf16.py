"""GEGLU projection: y = gelu(x @ W1^T) * (x @ W2^T), exact (erf) GELU, all bf16.

x is (M, K) bf16; W1 and W2 are the weights of two nn.Linear(K, N, bias=False) in bf16,
so y is (M, N) bf16.  The Triton version computes both matmuls in one kernel (two fp32
accumulators over the same x tile) and applies GELU and the product in the epilogue.

Known problems:
- line 87: fixed 64x64x32 tiles with the default num_warps/num_stages and no autotuning; far from H200 tensor-core peak for two 4096x5632x4096 GEMMs (bigger 128x128x64 tiles, 8 warps, 3-4 stages are the usual start).
- line 88: plain row-major 2-D tile grid with no grouped (swizzled) tile ordering, so x and W tiles get less L2 reuse and are re-read from HBM more often.
- lines 56-64: K-boundary masks are built and applied on every K iteration even though K is a multiple of BLOCK_K at the benchmark shape (small cost).
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M_ROWS = 4096
IN_FEATURES = 4096
OUT_FEATURES = 5632

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.w1 = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
        self.w2 = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.w1(x)) * self.w2(x)


@triton.jit
def _geglu_kernel(
    x_ptr, w1_ptr, w2_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    UPCAST: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        x_mask = (offs_m[:, None] < M) & (kk[None, :] < K)
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + kk[None, :] * stride_xk,
                    mask=x_mask, other=0.0)
        # W is (N, K); load a (BLOCK_K, BLOCK_N) tile of W^T
        w_mask = (kk[:, None] < K) & (offs_n[None, :] < N)
        w_off = offs_n[None, :] * stride_wn + kk[:, None] * stride_wk
        w1 = tl.load(w1_ptr + w_off, mask=w_mask, other=0.0)
        w2 = tl.load(w2_ptr + w_off, mask=w_mask, other=0.0)
        if UPCAST:
            # CPU interpreter only: its tl.dot on bf16 operands is wrong, so upcast there.
            x = x.to(tl.float32)
            w1 = w1.to(tl.float32)
            w2 = w2.to(tl.float32)
        acc1 += tl.dot(x, w1)
        acc2 += tl.dot(x, w2)

    # F.gelu on bf16 rounds each linear output to bf16 first; mirror that
    h1 = acc1.to(tl.bfloat16).to(tl.float32)
    h2 = acc2.to(tl.bfloat16).to(tl.float32)
    g = 0.5 * h1 * (1.0 + tl.erf(h1 * 0.7071067811865476))
    y = g.to(tl.bfloat16).to(tl.float32) * h2
    y_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(tl.bfloat16), mask=y_mask)


def geglu(x, w1, w2):
    M, K = x.shape
    N = w1.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _geglu_kernel[grid](
        x, w1, w2, y,
        M, N, K,
        x.stride(0), x.stride(1),
        w1.stride(0), w1.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        UPCAST=_INTERPRET,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.w1 = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
        self.w2 = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return geglu(x, self.w1.weight, self.w2.weight)


def get_inputs():
    return [torch.randn(M_ROWS, IN_FEATURES, dtype=torch.bfloat16)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]


TEST_SHAPES = [
    {"M_ROWS": 64, "IN_FEATURES": 128, "OUT_FEATURES": 128},
    {"M_ROWS": 37, "IN_FEATURES": 129, "OUT_FEATURES": 75},
]
