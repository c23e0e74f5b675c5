"""y = x + gelu(x @ W^T + b), exact (erf) GELU, fused into one Triton matmul kernel.

x: (M, N) fp16 with M = 8192, N = 2048; nn.Linear(N, N) in fp16 with bias.
Output: (M, N) fp16.

Known problems:
- lines 40-41, 75: program ids map straight onto (m-tile, n-tile) with no grouped/swizzled ordering, so programs running at the same time share little of x and W in L2
- lines 48-55: every K-loop load is masked on M/N/K although K is a multiple of BLOCK_K at the benchmark shape, and BLOCK_K=32 gives short, overhead-heavy iterations
- lines 74, 83: fixed 128x128x32 tile with num_warps=4, num_stages=3 and no autotuning; a 128x128 fp32 accumulator on 4 warps is register-heavy and under-uses Hopper wgmma (8 warps, BLOCK_K=64 typical)
- lines 50-55, 75: plain pointer loads and a non-persistent 1024-tile grid; no TMA tensor descriptors or persistent scheduling, so the mainloop stays short of cuBLAS on H100
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 8192
N = 2048


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features).half()

    def forward(self, x):
        return x + F.gelu(self.linear(x))


@triton.jit
def linear_gelu_residual_kernel(
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

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_idx = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + k_idx[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (k_idx[None, :] < K), other=0.0)
        # W is (N, K); load a (BLOCK_K, BLOCK_N) tile of W^T
        b = tl.load(w_ptr + offs_n[None, :] * stride_wn + k_idx[:, None] * stride_wk,
                    mask=(offs_n[None, :] < N) & (k_idx[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    g = 0.5 * h * (1.0 + tl.erf(h * 0.7071067811865476))

    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    res = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xk,
                  mask=out_mask, other=0.0).to(tl.float32)
    y = res + g
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             y.to(y_ptr.dtype.element_ty), mask=out_mask)


def linear_gelu_residual(x, weight, bias):
    Mx, K = x.shape
    Nw = weight.shape[0]
    assert Nw == K, "residual needs in_features == out_features"
    y = torch.empty((Mx, Nw), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
    linear_gelu_residual_kernel[grid](
        x, weight, bias, y,
        Mx, Nw, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4, num_stages=3,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features).half()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        y = linear_gelu_residual(x2, self.linear.weight, self.linear.bias)
        return y.reshape(x.shape)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 64, "N": 64},
    {"M": 100, "N": 129},
    {"M": 37, "N": 48},
]
