"""Bias-free linear, SiLU, then a per-output-column scale: y = silu(x @ W^T) * s.

x is (M, K) fp16 (forward input); W is (N, K) fp16 (nn.Linear weight, no bias); s is an (N,) fp16 nn.Parameter;
y is (M, N) fp16. The Triton version accumulates x @ W^T in fp32, applies silu(v) = v * sigmoid(v) and the column
scale in fp32, and casts to fp16 once at the store.

Known problems:
- ModelNew.forward launch: fixed BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=4, default num_stages; no autotuning for the 4096x2048 @ 2048x8192 shape.
- _linear_silu_scale_kernel program-id mapping (pid_m = pid // num_pid_n): row-major tile order without grouping, so W (8192x2048) tiles get poor L2 reuse across neighbouring programs.
- _linear_silu_scale_kernel K loop: k_mask applied to both loads every iteration although K=2048 is a multiple of BLOCK_K.
- _linear_silu_scale_kernel W tile load: W^T is read through strides as a (BLOCK_K, BLOCK_N) tile (K-contiguous in memory) with no block pointers / TMA, which may limit load vectorization.
- _linear_silu_scale_kernel epilogue: sigmoid is computed as 1 / (1 + exp(-v)) with a full-precision division on the fp32 tile rather than a faster exp2 / approximate-reciprocal form.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

BATCH_M = 4096
IN_FEATURES = 2048
OUT_FEATURES = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False).half()
        self.scale = nn.Parameter(torch.randn(out_features, dtype=torch.float16))

    def forward(self, x):
        return F.silu(self.linear(x)) * self.scale


@triton.jit
def _linear_silu_scale_kernel(
    x_ptr, w_ptr, s_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
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
        w = tl.load(w_ptr + k_idx[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(a, w)

    s = tl.load(s_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    sig = 1.0 / (1.0 + tl.exp(-acc))
    out = acc * sig * s[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             out.to(tl.float16), mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False).half()
        self.scale = nn.Parameter(torch.randn(out_features, dtype=torch.float16))

    def forward(self, x):
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        _linear_silu_scale_kernel[grid](
            x, w, self.scale, y,
            M, N, K,
            x.stride(0), x.stride(1),
            w.stride(0), w.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=4,
        )
        return y


def get_inputs():
    x = torch.randn(BATCH_M, IN_FEATURES, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]


TEST_SHAPES = [
    {"BATCH_M": 128, "IN_FEATURES": 64, "OUT_FEATURES": 256},
    {"BATCH_M": 90, "IN_FEATURES": 50, "OUT_FEATURES": 141},
]
