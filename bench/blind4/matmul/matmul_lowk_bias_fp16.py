"""y = x @ W + b in fp16 with a very small reduction dim (K = 128).

x: (M, K) fp16, W: (K, N) fp16 parameter, b: (N,) fp16 parameter; y: (M, N) fp16,
accumulated in fp32. With K = 128 the output (M x N fp16) dominates the traffic.

Known problems:
- line 75: fixed 64x64x32 tiles, default num_warps/num_stages, no autotune: small output tiles mean x and W are re-read N/64 and M/64 times (~512 MB of L2 traffic for a 128 MB output)
- lines 55, 59, 60: K = 128 is split into 4 BLOCK_K=32 steps with K masks on every load, although the whole K fits one tile (could be a single dot, no loop)
- lines 47, 48: plain 2-D launch order, no grouped/swizzled pid mapping for L2 reuse
- line 67: the op is bound by the 128 MB fp16 output write; stores are plain masked pointer stores of 64x64 tiles (no larger tiles / persistent kernel to keep the store stream saturated)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
K = 128
N = 8192

TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 128},
    {"M": 37, "K": 45, "N": 129},
    {"M": 129, "K": 128, "N": 70},
]


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n, dtype=torch.float16) / (k ** 0.5))
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float16))

    def forward(self, x):
        return x @ self.weight + self.bias


@triton.jit
def matmul_bias_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wk, stride_wn,
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
        kk = k0 + offs_k
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + kk[None, :] * stride_xk
        w_ptrs = w_ptr + kk[:, None] * stride_wk + offs_n[None, :] * stride_wn
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptrs, mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, w)

    b = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc += b[None, :].to(tl.float32)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_bias(x, w, b):
    m, k = x.shape
    k2, n = w.shape
    assert k == k2
    y = torch.empty((m, n), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    matmul_bias_kernel[grid](
        x, w, b, y,
        m, n, k,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n, dtype=torch.float16) / (k ** 0.5))
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float16))

    def forward(self, x):
        return matmul_bias(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]
