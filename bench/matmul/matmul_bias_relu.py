"""relu(A @ W^T + bias) for fp16 A (M, K), W (N, K) (a linear layer), fp32 accumulation, fp16 output.

Known problems:
- line 34: W^T read through strides (k along the contiguous axis of W) without a hint: B tile loads strided
- lines 25-26: a 2D grid in row-major program order: no grouping for L2 reuse
- line 62: 64x64x32 tiles, num_warps and num_stages left at their defaults
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
K = 4096
TEST_SHAPES = [{"M": 40, "N": 72, "K": 50}, {"M": 64, "N": 64, "K": 64}]


@triton.jit
def linear_relu_kernel(
    a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    c = tl.maximum(acc + bias[None, :], 0.0).to(tl.float16)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, K, dtype=torch.float16) / K**0.5)
        self.bias = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, a):
        return torch.relu(a.float() @ self.weight.float().t() + self.bias.float()).half()


class ModelNew(Model):
    def forward(self, a):
        m, k = a.shape
        n = self.weight.shape[0]
        c = torch.empty(m, n, dtype=a.dtype, device=a.device)
        w = self.weight
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        linear_relu_kernel[grid](
            a, w, self.bias, c, m, n, k, a.stride(0), a.stride(1), w.stride(0), w.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
        )
        return c


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return []
