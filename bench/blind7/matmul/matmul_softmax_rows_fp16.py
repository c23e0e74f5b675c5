"""Matmul followed by a row softmax, fp16 in / fp16 out.

Computes y = torch.softmax((a @ b).float(), dim=1).half(): the product is
formed in fp16 (as torch does), the softmax over each row (dim=1, length N)
is done in fp32 and the result is returned as fp16.

Shapes / dtypes:
    a: (M, K) fp16
    b: (K, N) fp16
    y: (M, N) fp16
Benchmark shape: M=4096, K=1024, N=256.

Known problems:
- Each program owns BLOCK_M full rows (BLOCK_N = next_pow2(N) columns), so the
  whole row must fit one tile; this only works for small N and gives just
  M/64 = 64 programs at the benchmark shape, under half of an H100's SMs.
- The B operand (K x N) is re-read from global memory by every program; with
  only 64 programs each streaming the whole of b, the kernel is closer to
  latency-bound than compute-bound.
- Fixed untuned block sizes (64 x next_pow2(N) x 32, 8 warps, 3 stages) and a
  large fp32 accumulator per program (register pressure).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
K = 1024
N = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.softmax((a @ b).float(), dim=1).to(torch.float16)


@triton.jit
def _matmul_softmax_kernel(
    a_ptr, b_ptr, y_ptr,
    Mdim, Ndim, Kdim,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    n_mask = offs_n < Ndim

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, Kdim, BLOCK_K):
        k_mask = (k0 + offs_k) < Kdim
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < Mdim) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # round the product to fp16 like the reference (a @ b is an fp16 tensor),
    # then do the softmax in fp32
    logits = acc.to(tl.float16).to(tl.float32)
    logits = tl.where(n_mask[None, :], logits, float("-inf"))
    row_max = tl.max(logits, axis=1)
    e = tl.exp(logits - row_max[:, None])
    e = tl.where(n_mask[None, :], e, 0.0)
    denom = tl.sum(e, axis=1)
    y = e / denom[:, None]

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    y_mask = (offs_m[:, None] < Mdim) & n_mask[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=y_mask)


def matmul_softmax_rows(a, b):
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0]
    Ma, Ka = a.shape
    Nb = b.shape[1]
    BLOCK_N = max(16, triton.next_power_of_2(Nb))
    assert BLOCK_N <= 256, "row must fit in one tile in this draft"
    y = torch.empty((Ma, Nb), device=a.device, dtype=torch.float16)
    BLOCK_M, BLOCK_K = 64, 32
    grid = (triton.cdiv(Ma, BLOCK_M),)
    _matmul_softmax_kernel[grid](
        a, b, y,
        Ma, Nb, Ka,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul_softmax_rows(a, b)


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 64},
    {"M": 100, "K": 37, "N": 129},
    {"M": 129, "K": 70, "N": 37},
]
