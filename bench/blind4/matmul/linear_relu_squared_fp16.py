"""y = relu(x @ W^T + b) ** 2 with an fp16 nn.Linear(K, N); x (M, K) fp16, y (M, N) fp16, fp32 accumulation.

Known problems:
- Lines 31-32, 58: plain row-major 2D grid with no grouped (swizzled) tile order, so L2 reuse of x and W tiles is poor at 4096^3.
- Line 57: fixed small 64x64x32 tiles, no autotuning, default num_warps/num_stages; far from peak tensor-core throughput on H200 (128x128/256x64 tiles with 3-4 stages would be typical).
- Lines 39-43: K-dimension masks evaluated on every iteration although K is a multiple of BLOCK_K for the benchmark shape (minor).
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
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return torch.relu(self.linear(x)) ** 2


@triton.jit
def linear_relu_sq_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                          stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + kk[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        # W is (N, K); load a (BLOCK_K, BLOCK_N) tile of W^T
        b = tl.load(w_ptr + offs_n[None, :] * stride_wn + kk[:, None] * stride_wk,
                    mask=(offs_n[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = tl.maximum(acc, 0.0)
    acc = acc * acc
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, acc.to(tl.float16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear_relu_sq(x, weight, bias):
    Mx, Kx = x.shape
    Nw = weight.shape[0]
    y = torch.empty((Mx, Nw), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(Mx, BLOCK_M), triton.cdiv(Nw, BLOCK_N))
    linear_relu_sq_kernel[grid](x, weight, bias, y, Mx, Nw, Kx,
                                x.stride(0), x.stride(1), weight.stride(0), weight.stride(1),
                                y.stride(0), y.stride(1),
                                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return linear_relu_sq(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(M, K).half()]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 128, "N": 64},
    {"M": 37, "K": 129, "N": 83},
    {"M": 130, "K": 96, "N": 200},
]
