"""y = torch.nn.functional.gelu(x @ W.T + b) with exact (erf) GELU; x, W, b in fp16, fp32 accumulation.

Known problems:
- Fixed block sizes (128x128x32) and num_warps/num_stages, no autotune.
- No grouped/swizzled program ordering, so L2 reuse of W tiles across row blocks is left to chance.
- W is read as a transposed (K-major) tile through strides rather than a pre-arranged layout.
- No TMA / warp-specialized pipeline; relies on the compiler's default software pipelining.
- Masked loads on every K step even when K is a multiple of BLOCK_K.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        g = torch.Generator().manual_seed(1234)
        bound = 1.0 / (in_features ** 0.5)
        w = (torch.rand(out_features, in_features, generator=g) * 2 - 1) * bound
        bb = (torch.rand(out_features, generator=g) * 2 - 1) * bound
        self.weight = nn.Parameter(w.to(torch.float16))
        self.bias = nn.Parameter(bb.to(torch.float16))

    def forward(self, x):
        y = x @ self.weight.t() + self.bias
        return torch.nn.functional.gelu(y)


@triton.jit
def _linear_bias_gelu_kernel(
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
    mask_m = offs_m < M
    mask_n = offs_n < N

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    # W^T tile: element (k, n) = W[n, k]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    out = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        g = torch.Generator().manual_seed(1234)
        bound = 1.0 / (in_features ** 0.5)
        w = (torch.rand(out_features, in_features, generator=g) * 2 - 1) * bound
        bb = (torch.rand(out_features, generator=g) * 2 - 1) * bound
        self.weight = nn.Parameter(w.to(torch.float16))
        self.bias = nn.Parameter(bb.to(torch.float16))

    def forward(self, x):
        Mx, Kx = x.shape
        Nw = self.weight.shape[0]
        y = torch.empty((Mx, Nw), dtype=torch.float16, device=x.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
        _linear_bias_gelu_kernel[grid](
            x, self.weight, self.bias, y,
            Mx, Nw, Kx,
            x.stride(0), x.stride(1),
            self.weight.stride(0), self.weight.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=8, num_stages=3,
        )
        return y


def get_inputs():
    x = torch.randn(M, K, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 96, "N": 160},
    {"M": 130, "K": 70, "N": 100},
    {"M": 77, "K": 200, "N": 129},
]
