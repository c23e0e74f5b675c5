"""Linear + bias + sigmoid, fp16.

Computes y = sigmoid(x @ W^T + b) where W (N, K) and b (N,) belong to an fp16
nn.Linear(K, N) and x is (M, K) fp16; y is (M, N) fp16. The Triton kernel does
the GEMM with fp32 accumulation and fuses bias add and sigmoid into the epilogue.

Benchmark shape: M=8192, K=2048, N=2048.

Known problems:
- L77-L77: fixed 64x64x32 tiles, no autotuning; small tiles for an H200 (low data reuse per tile, many tiles).
- L43-L44: plain 2D launch grid (L78), pid_m fastest, with no grouped/swizzled tile order, so L2 reuse of x and W tiles is poor.
- L79-L86: default num_warps/num_stages at launch, not tuned for the tile shape.
- L56-L59: K-tail masks are applied on every K iteration even though K is a multiple of BLOCK_K at the benchmark shape.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
K = 2048
N = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


@triton.jit
def linear_bias_sigmoid_kernel(
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
        k = k0 + offs_k
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk
        # W is (N, K); load a (BLOCK_K, BLOCK_N) tile of W^T
        w_ptrs = w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn
        x_mask = (offs_m[:, None] < M) & (k[None, :] < K)
        w_mask = (k[:, None] < K) & (offs_n[None, :] < N)
        a = tl.load(x_ptrs, mask=x_mask, other=0.0)
        w = tl.load(w_ptrs, mask=w_mask, other=0.0)
        acc += tl.dot(a, w)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    y = 1.0 / (1.0 + tl.exp(-acc))

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    y_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptrs, y.to(tl.float16), mask=y_mask)


def linear_bias_sigmoid(x, weight, bias):
    assert x.dim() == 2 and weight.dim() == 2
    Mx, Kx = x.shape
    Nw, Kw = weight.shape
    assert Kx == Kw
    y = torch.empty((Mx, Nw), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
    linear_bias_sigmoid_kernel[grid](
        x, weight, bias, y,
        Mx, Nw, Kx,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return linear_bias_sigmoid(x, self.linear.weight, self.linear.bias)


def get_inputs():
    x = torch.randn(M, K, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 64},
    {"M": 37, "K": 129, "N": 75},
    {"M": 130, "K": 96, "N": 33},
]
