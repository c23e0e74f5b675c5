"""Tall-skinny A^T @ B, fp32 (reduction over the long axis).

Computes out = a^T @ b, i.e. a.t() @ b.

Shapes / dtypes:
    a:   (L, M) fp32
    b:   (L, N) fp32
    out: (M, N) fp32
Benchmark shape: L=65536, M = N = 128 (64 MiB of input, ~2.1 GFLOP).

Known problems:
- Split-K over L with fp32 tl.atomic_add into a zero-initialised output: the
  extra zero-fill launch, the atomics, and a non-deterministic summation order.
- The dot runs with input_precision="ieee" (full fp32, no tensor-core TF32) to
  match torch's default fp32 matmul; that is much slower than TF32.
- The a tile is loaded (L, M)-major and transposed in registers with tl.trans.
- Split length (1024 rows of L per program) and 64x64x32 tiles are fixed
  guesses, not tuned against SM count.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

L = 65536
M = 128
N = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a.t() @ b


@triton.jit
def _at_b_splitk_kernel(
    a_ptr, b_ptr, c_ptr,
    Ldim, Mdim, Ndim,
    stride_al, stride_am,
    stride_bl, stride_bn,
    stride_cm, stride_cn,
    L_PER_SPLIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_s = tl.program_id(2)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_l = tl.arange(0, BLOCK_L)
    m_mask = offs_m < Mdim
    n_mask = offs_n < Ndim

    l_start = pid_s * L_PER_SPLIT
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for l0 in range(0, L_PER_SPLIT, BLOCK_L):
        ll = l_start + l0 + offs_l
        l_mask = ll < Ldim
        a = tl.load(a_ptr + ll[:, None].to(tl.int64) * stride_al + offs_m[None, :] * stride_am,
                    mask=l_mask[:, None] & m_mask[None, :], other=0.0)
        b = tl.load(b_ptr + ll[:, None].to(tl.int64) * stride_bl + offs_n[None, :] * stride_bn,
                    mask=l_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(tl.trans(a), b, acc, input_precision="ieee")

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.atomic_add(c_ptrs, acc, mask=m_mask[:, None] & n_mask[None, :])


def tall_skinny_at_b(a, b):
    assert a.dim() == 2 and b.dim() == 2 and a.shape[0] == b.shape[0]
    La, Ma = a.shape
    Nb = b.shape[1]
    c = torch.zeros((Ma, Nb), device=a.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_L = 64, 64, 32
    L_PER_SPLIT = 1024
    grid = (triton.cdiv(Ma, BLOCK_M), triton.cdiv(Nb, BLOCK_N), triton.cdiv(La, L_PER_SPLIT))
    _at_b_splitk_kernel[grid](
        a, b, c,
        La, Ma, Nb,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        L_PER_SPLIT=L_PER_SPLIT,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_L=BLOCK_L,
        num_warps=4, num_stages=3,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return tall_skinny_at_b(a, b)


def get_inputs():
    a = torch.randn(L, M, dtype=torch.float32)
    b = torch.randn(L, N, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"L": 1024, "M": 64, "N": 64},
    {"L": 2500, "M": 37, "N": 20},
    {"L": 1100, "M": 70, "N": 100},
]
