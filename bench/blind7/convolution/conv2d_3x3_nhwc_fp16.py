"""3x3 2-D convolution on channels-last (NHWC) data, padding 1, stride 1, no bias.

Computes (reference)
    y = F.conv2d(x.permute(0, 3, 1, 2), w, padding=1).permute(0, 2, 3, 1).contiguous()

Shapes / dtypes:
    x: (N, H, W, C) fp16 contiguous, w: (COUT, C, 3, 3) fp16
    -> y: (N, H, W, COUT) fp16 contiguous
    benchmark: N=8, H=W=56, C=COUT=64  (~1.85 GFLOP)

Implemented as an implicit GEMM: rows = output pixels (N*H*W), columns = COUT,
reduction = 9 taps x C (channel loads are contiguous in NHWC), fp32 accumulation via
tl.dot.

Known problems:
- Every one of the 9 taps re-loads an overlapping activation tile from global memory;
  no shared-memory halo tile is kept, so input traffic relies on L1/L2 hits.
- The weight is used in its (COUT, C, 3, 3) layout, so the [C, COUT] weight tile is a
  strided gather (stride 9 along C, 9*C along COUT) instead of a pre-packed K-major copy.
- With C=64 the per-tap reduction is short (2 dots of K=32), so loop/mask overhead is
  large relative to MMA work; block sizes and num_stages are not tuned.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 8
H = 56
W = 56
C = 64
COUT = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        y = F.conv2d(x.permute(0, 3, 1, 2), w, padding=1)
        return y.permute(0, 2, 3, 1).contiguous()


@triton.jit
def _conv2d_3x3_nhwc_kernel(
    x_ptr, w_ptr, y_ptr,
    NB, HH, WW, CI, CO,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    HW = HH * WW
    total_m = NB * HW

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < total_m
    n_mask = offs_n < CO

    nb = offs_m // HW
    sp = offs_m % HW
    oh = sp // WW
    ow = sp % WW

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kh in tl.static_range(3):
        for kw in tl.static_range(3):
            ih = oh + (kh - 1)
            iw = ow + (kw - 1)
            valid = m_mask & (ih >= 0) & (ih < HH) & (iw >= 0) & (iw < WW)
            pix = ((nb.to(tl.int64) * HH + ih) * WW + iw) * CI
            tap = kh * 3 + kw
            for c0 in range(0, CI, BLOCK_C):
                offs_c = c0 + tl.arange(0, BLOCK_C)
                c_mask = offs_c < CI
                a = tl.load(x_ptr + pix[:, None] + offs_c[None, :],
                            mask=valid[:, None] & c_mask[None, :], other=0.0)
                b = tl.load(w_ptr + offs_n[None, :] * (CI * 9) + offs_c[:, None] * 9 + tap,
                            mask=c_mask[:, None] & n_mask[None, :], other=0.0)
                acc = tl.dot(a, b, acc)

    y_off = offs_m.to(tl.int64)[:, None] * CO + offs_n[None, :]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def conv2d_3x3_nhwc(x, w, BLOCK_M=64, BLOCK_N=64, BLOCK_C=32):
    x = x.contiguous()
    w = w.contiguous()
    nb, hh, ww, ci = x.shape
    co = w.shape[0]
    y = torch.empty((nb, hh, ww, co), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(nb * hh * ww, BLOCK_M), triton.cdiv(co, BLOCK_N))
    _conv2d_3x3_nhwc_kernel[grid](
        x, w, y, nb, hh, ww, ci, co,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_C=BLOCK_C, num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return conv2d_3x3_nhwc(x, w)


def get_inputs():
    x = torch.randn(N, H, W, C, dtype=torch.float16)
    w = (torch.randn(COUT, C, 3, 3) / (C * 9) ** 0.5).to(torch.float16)
    return [x, w]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 1, "H": 7, "W": 9, "C": 5, "COUT": 7},
    {"N": 2, "H": 10, "W": 13, "C": 37, "COUT": 100},
    {"N": 1, "H": 8, "W": 8, "C": 64, "COUT": 64},
]
