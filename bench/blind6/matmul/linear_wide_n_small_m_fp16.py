"""nn.Linear(K=4096, N=16384) in fp16 with bias, applied to x of shape (M=256, K=4096) fp16.

out = x @ W^T + b, W is (N, K) fp16, b is (N,) fp16, out is (M, N) fp16.

Known problems:
- lines 43-53, 69: fixed 64x64x32 tiles with default num_warps/num_stages and no autotuning; small tiles and BLOCK_K=32 give low arithmetic intensity per loaded byte for H100 tensor cores on a 34 GFLOP GEMM.
- lines 49-52, 69-70: BLOCK_M=64 < M=256, so every W tile is fetched by 4 different programs; W (16384x4096 fp16, 128 MB) dominates traffic and its reuse relies on L2 hits instead of one program covering all of M (e.g. BLOCK_M=128/256 or a split that streams W once).
- lines 47, 51: K-bound masks recomputed and applied in every K iteration although K is a multiple of BLOCK_K at the benchmark shape (EVEN_K specialization missing).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 256
K = 4096
N = 16384


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return self.linear(x)


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr,
                  M, N, K,
                  stride_xm, stride_xk,
                  stride_wn, stride_wk,
                  stride_om, stride_on,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        # x tile: (BLOCK_M, BLOCK_K)
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + kk[None, :] * stride_xk
        x_mask = (offs_m[:, None] < M) & (kk[None, :] < K)
        x_tile = tl.load(x_ptrs, mask=x_mask, other=0.0)
        # W^T tile: (BLOCK_K, BLOCK_N), read from W (N, K)
        w_ptrs = w_ptr + offs_n[None, :] * stride_wn + kk[:, None] * stride_wk
        w_mask = (offs_n[None, :] < N) & (kk[:, None] < K)
        w_tile = tl.load(w_ptrs, mask=w_mask, other=0.0)
        acc += tl.dot(x_tile, w_tile)

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]

    out_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptrs, acc.to(tl.float16), mask=out_mask)


def triton_linear(x, weight, bias):
    orig_shape = x.shape
    x2 = x.reshape(-1, orig_shape[-1])
    m, k = x2.shape
    n = weight.shape[0]
    out = torch.empty((m, n), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    linear_kernel[grid](
        x2, weight, bias, out,
        m, n, k,
        x2.stride(0), x2.stride(1),
        weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out.reshape(*orig_shape[:-1], n)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return triton_linear(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 128, "N": 256},
    {"M": 37, "K": 100, "N": 129},
]
