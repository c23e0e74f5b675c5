"""y = x @ W.T with x (M, K) fp16 (decode-style tiny M) and W (N, K) fp16 passed as an input; fp32 accumulation.

Known problems:
- Fixed block sizes (16x64x128) and num_warps/num_stages, no autotune.
- Memory-bound on streaming W, yet no split-K: only N/64 = 128 programs (about one per SM), too few loads in flight.
- W read as a transposed (K-major) tile through strides; no TMA or explicit cache hints for the streamed weight.
- Masked loads on every K step even when K is a multiple of BLOCK_K.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16
K = 4096
N = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, W):
        return x @ W.t()


@triton.jit
def _linear_small_m_kernel(
    x_ptr, w_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, W):
        Mx, Kx = x.shape
        Nw = W.shape[0]
        y = torch.empty((Mx, Nw), dtype=torch.float16, device=x.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 16, 64, 128
        grid = (triton.cdiv(Nw, BLOCK_N), triton.cdiv(Mx, BLOCK_M))
        _linear_small_m_kernel[grid](
            x, W, y,
            Mx, Nw, Kx,
            x.stride(0), x.stride(1),
            W.stride(0), W.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=4, num_stages=4,
        )
        return y


def get_inputs():
    x = torch.randn(M, K, dtype=torch.float16)
    W = torch.randn(N, K, dtype=torch.float16) / (K ** 0.5)
    return [x, W]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 16, "K": 256, "N": 192},
    {"M": 5, "K": 300, "N": 100},
    {"M": 20, "K": 200, "N": 130},
]
