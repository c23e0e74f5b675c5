"""out = silu(x @ W.T + b); x (BATCH, IN_FEATURES) fp32, W (OUT_FEATURES, IN_FEATURES) and b (OUT_FEATURES,) parameters.

W is read through its strides as a (K, N) view of W^T (no transposed copy). fp32 accumulation with tl.dot over
in_features, bias add and x * sigmoid(x) in the epilogue. The dot runs with input_precision="ieee" so it rounds like
torch's default fp32 matmul (no TF32).

Known problems:
- lines 45-47: every K-step load carries an M/N and a K-remainder mask, even on interior tiles and when K is a multiple of BLOCK_K
- line 48: fp32 tl.dot in "ieee" precision runs on the FMA units, not on tensor cores (TF32 would be several times faster but rounds differently from torch's default fp32 matmul)
- lines 65, 74: one fixed 64x64x32 tile with 4 warps and the default num_stages, chosen without tuning for the H200
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 4096
IN_FEATURES = 1024
OUT_FEATURES = 2048


@triton.jit
def linear_silu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    wt_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        wt = tl.load(wt_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, wt, input_precision="ieee")
        x_ptrs += BLOCK_K * stride_xk
        wt_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    z = acc + bias[None, :]
    out = z * tl.sigmoid(z)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear_silu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    n, k2 = weight.shape
    assert k == k2 and bias.shape == (n,)
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    linear_silu_kernel[grid](
        x, weight, bias, y,
        m, n, k,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=4,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        return torch.nn.functional.silu(torch.nn.functional.linear(x, self.weight, self.bias))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        return linear_silu(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]


TEST_SHAPES = [
    {"BATCH": 37, "IN_FEATURES": 71, "OUT_FEATURES": 129},
    {"BATCH": 64, "IN_FEATURES": 128, "OUT_FEATURES": 64},
]
