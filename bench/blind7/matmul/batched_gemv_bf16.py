"""Batched matrix-vector product, bf16.

Computes y[i] = A[i] @ x[i] for every batch i, i.e.
    torch.bmm(A, x.unsqueeze(2)).squeeze(2).

Shapes / dtypes:
    A: (B, R, C) bf16
    x: (B, C) bf16
    y: (B, R) bf16
Benchmark shape: B=64, R = C = 2048 (A is 64*2048*2048 bf16 = 512 MiB;
the op is memory bound).

Known problems:
- Block shape (64 rows x 128 columns, 4 warps) is a guess; each program walks
  the whole row length C serially with no split over C, and loads are not
  vectorisation-tuned.
- The x chunk is re-loaded from global memory by every row-block program of the
  same batch (served from L2/L1, but still extra instructions).
- The reduction uses an elementwise multiply + tl.sum per chunk into an fp32
  accumulator instead of accumulating a 2D partial and reducing once at the
  end.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 64
R = 2048
C = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, x):
        return torch.bmm(A, x.unsqueeze(2)).squeeze(2)


@triton.jit
def _batched_gemv_kernel(
    a_ptr, x_ptr, y_ptr,
    Rdim, Cdim,
    stride_ab, stride_ar, stride_ac,
    stride_xb, stride_xc,
    stride_yb, stride_yr,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_r = tl.program_id(1)

    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_c = tl.arange(0, BLOCK_C)
    r_mask = offs_r < Rdim

    a_base = a_ptr + pid_b.to(tl.int64) * stride_ab
    x_base = x_ptr + pid_b.to(tl.int64) * stride_xb

    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for c0 in range(0, Cdim, BLOCK_C):
        cc = c0 + offs_c
        c_mask = cc < Cdim
        a = tl.load(a_base + offs_r[:, None] * stride_ar + cc[None, :] * stride_ac,
                    mask=r_mask[:, None] & c_mask[None, :], other=0.0)
        xv = tl.load(x_base + cc * stride_xc, mask=c_mask, other=0.0)
        acc += tl.sum(a.to(tl.float32) * xv.to(tl.float32)[None, :], axis=1)

    y_ptrs = y_ptr + pid_b.to(tl.int64) * stride_yb + offs_r * stride_yr
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=r_mask)


def batched_gemv(A, x):
    assert A.dim() == 3 and x.dim() == 2
    Bn, Rn, Cn = A.shape
    assert x.shape == (Bn, Cn)
    y = torch.empty((Bn, Rn), device=A.device, dtype=A.dtype)
    BLOCK_R, BLOCK_C = 64, 128
    grid = (Bn, triton.cdiv(Rn, BLOCK_R))
    _batched_gemv_kernel[grid](
        A, x, y,
        Rn, Cn,
        A.stride(0), A.stride(1), A.stride(2),
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, x):
        return batched_gemv(A, x)


def get_inputs():
    A = torch.randn(B, R, C, dtype=torch.bfloat16)
    x = torch.randn(B, C, dtype=torch.bfloat16)
    return [A, x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 4, "R": 64, "C": 128},
    {"B": 3, "R": 100, "C": 37},
    {"B": 5, "R": 129, "C": 300},
]
