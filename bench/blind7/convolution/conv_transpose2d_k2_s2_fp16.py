"""2-D transposed convolution, kernel 2, stride 2, with bias (non-overlapping upsample).

Computes
    y = F.conv_transpose2d(x, w, b, stride=2)
i.e. y[n, co, 2h+i, 2w+j] = b[co] + sum_ci x[n, ci, h, w] * w[ci, co, i, j].

Shapes / dtypes:
    x: (N, CIN, H, W) fp16, w: (CIN, COUT, 2, 2) fp16, b: (COUT,) fp16
    -> y: (N, COUT, 2H, 2W) fp16
    benchmark: N=8, CIN=256, COUT=128, H=W=64  (~8.6 GFLOP)

Implemented as a GEMM: rows = input pixels (N*H*W), columns = COUT*4 (the weight viewed
as (CIN, COUT*4)), reduction = CIN; each result element is scattered to its output
position, fp32 accumulation via tl.dot.

Known problems:
- x is NCHW, so the A tile [pixels, channels] is read with channel stride H*W (coalesced
  only along the pixel axis), not from a K-contiguous layout.
- The store is a scatter: adjacent GEMM columns (i, j) land in different output rows /
  every other column, so writes are poorly coalesced and the output (the largest tensor)
  is written with a strided pattern.
- Fixed block sizes, no software pipelining tuning, no grouping of program ids for L2 reuse.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 8
CIN = 256
COUT = 128
H = 64
W = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        return F.conv_transpose2d(x, w, b, stride=2)


@triton.jit
def _convT2d_k2s2_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    NB, CI, CO, HH, WW,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    HW = HH * WW
    total_m = NB * HW
    total_n = CO * 4

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < total_m
    n_mask = offs_n < total_n

    nb = offs_m // HW
    sp = offs_m % HW
    ih = sp // WW
    iw = sp % WW
    x_row = nb.to(tl.int64) * CI * HW + sp

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, CI, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = offs_k < CI
        a = tl.load(x_ptr + x_row[:, None] + offs_k[None, :].to(tl.int64) * HW,
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        bt = tl.load(w_ptr + offs_k[:, None] * total_n + offs_n[None, :],
                     mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, bt, acc)

    co = offs_n // 4
    ki = (offs_n // 2) % 2
    kj = offs_n % 2
    bias = tl.load(b_ptr + co, mask=n_mask, other=0.0).to(tl.float32)
    acc += bias[None, :]

    OW = 2 * WW
    OHW = 4 * HW
    oh = 2 * ih[:, None] + ki[None, :]
    ow = 2 * iw[:, None] + kj[None, :]
    y_off = (nb.to(tl.int64) * CO * OHW)[:, None] + co[None, :].to(tl.int64) * OHW + oh * OW + ow
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def conv_transpose2d_k2s2(x, w, b, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32):
    x = x.contiguous()
    w = w.contiguous()
    b = b.contiguous()
    nb, ci, hh, ww = x.shape
    co = w.shape[1]
    y = torch.empty((nb, co, 2 * hh, 2 * ww), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(nb * hh * ww, BLOCK_M), triton.cdiv(co * 4, BLOCK_N))
    _convT2d_k2s2_kernel[grid](
        x, w, b, y, nb, ci, co, hh, ww,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        return conv_transpose2d_k2s2(x, w, b)


def get_inputs():
    x = torch.randn(N, CIN, H, W, dtype=torch.float16)
    w = (torch.randn(CIN, COUT, 2, 2) / CIN ** 0.5).to(torch.float16)
    b = torch.randn(COUT, dtype=torch.float16)
    return [x, w, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 1, "CIN": 5, "COUT": 7, "H": 6, "W": 9},
    {"N": 2, "CIN": 37, "COUT": 20, "H": 5, "W": 13},
    {"N": 1, "CIN": 64, "COUT": 16, "H": 8, "W": 8},
]
