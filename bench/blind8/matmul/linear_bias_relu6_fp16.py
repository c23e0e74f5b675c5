"""Linear layer with bias followed by ReLU6: y = clamp(x @ W^T + b, 0, 6).

x is (M, K) fp16, W is (N, K) fp16 (nn.Linear weight layout), b is (N,) fp16, y is (M, N) fp16.
The Triton version computes the product tile by tile with fp32 accumulation, adds the bias and clamps
in fp32 and casts to fp16 once at the store.

Known problems:
- ModelNew.forward launch: fixed BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=4, num_stages left at default; no autotuning over tile shape / warps / stages for the 4096^3 shape.
- _linear_bias_relu6_kernel program-id mapping (pid_m = pid // num_pid_n): plain row-major tile order with no grouped (swizzled) ordering, so L2 reuse of W tiles across neighbouring programs is poor.
- _linear_bias_relu6_kernel K loop: masks on every K step (k_mask in both tl.load calls) even when K is a multiple of BLOCK_K, which adds compare/select work in the inner loop.
- _linear_bias_relu6_kernel W tile load: W^T is read through strides (stride_wk, stride_wn) as a (BLOCK_K, BLOCK_N) tile without telling the compiler about contiguity along K, so the load may not be fully vectorized; no TMA / block pointers are used.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

BATCH_M = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True).half()

    def forward(self, x):
        return torch.clamp(self.linear(x), 0.0, 6.0)


@triton.jit
def _linear_bias_relu6_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
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
        # (BLOCK_K, BLOCK_N) tile of W^T
        w = tl.load(w_ptr + k_idx[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(a, w)

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = tl.minimum(tl.maximum(acc, 0.0), 6.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             acc.to(tl.float16), mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True).half()

    def forward(self, x):
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        _linear_bias_relu6_kernel[grid](
            x, w, b, y,
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
    {"BATCH_M": 128, "IN_FEATURES": 64, "OUT_FEATURES": 128},
    {"BATCH_M": 77, "IN_FEATURES": 45, "OUT_FEATURES": 133},
]
