"""y = conv1d(x, weight, padding=2): x (N, C_IN, L) fp32, weight (C_OUT, C_IN, 5) fp32, no bias -> y (N, C_OUT, L) fp32.

Direct implicit-GEMM convolution. The grid is (L blocks, C_OUT blocks, N); each program computes a
BLOCK_CO x BLOCK_L output tile of one sample. It loops over input channels in BLOCK_CI chunks and, for each of the
5 taps, loads the (BLOCK_CO, BLOCK_CI) weight slice for that tap and the (BLOCK_CI, BLOCK_L) input window shifted by
tap - 2 (zero padding is done with the load mask), and accumulates tl.dot into an fp32 accumulator. tl.dot on fp32
inputs uses TF32 tensor cores by default, like cuDNN's default for torch conv (torch.backends.cudnn.allow_tf32).

Known problems:
- lines 61-64: the input window is re-loaded once per tap (5 times per channel chunk) with shifted
  masks instead of loading one BLOCK_L + 4 halo tile and slicing it; this multiplies x load traffic and mask work.
- lines 59-60: the weight slice for one tap is a strided gather (stride 5 along C_IN) re-read from global/L2 by
  every L block; pre-packing the weight as (5, C_OUT, C_IN) contiguous, or keeping it in shared memory, is better.
- lines 76-78: fixed 64 x 32 x 64 tiles with BLOCK_CI = 32 giving a small K per tl.dot, default
  num_warps / num_stages, no autotuning.
- line 79: batch on grid axis 2 with L blocks fastest; the C_OUT blocks that share one x window are
  64 programs apart in launch order, so L2 reuse of x depends on co-residency and is left to chance.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 16
C_IN = 256
C_OUT = 256
LENGTH = 4096
KSIZE = 5
PAD = 2


@triton.jit
def conv1d_kernel(
    x_ptr, w_ptr, y_ptr,
    C_in, C_out, L,
    stride_xn, stride_xc, stride_xl,
    stride_wo, stride_wi, stride_wk,
    stride_yn, stride_yc, stride_yl,
    KS: tl.constexpr, PADDING: tl.constexpr,
    BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)

    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_ci = tl.arange(0, BLOCK_CI)

    x_base = x_ptr + n * stride_xn
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for ci0 in range(0, C_in, BLOCK_CI):
        ci = ci0 + offs_ci
        for t in tl.static_range(KS):
            w_mask = (offs_co[:, None] < C_out) & (ci[None, :] < C_in)
            w = tl.load(w_ptr + offs_co[:, None] * stride_wo + ci[None, :] * stride_wi + t * stride_wk,
                        mask=w_mask, other=0.0)
            pos = offs_l + (t - PADDING)
            x_mask = (ci[:, None] < C_in) & (pos[None, :] >= 0) & (pos[None, :] < L)
            x = tl.load(x_base + ci[:, None] * stride_xc + pos[None, :] * stride_xl,
                        mask=x_mask, other=0.0)
            acc += tl.dot(w, x)

    y_ptrs = y_ptr + n * stride_yn + offs_co[:, None] * stride_yc + offs_l[None, :] * stride_yl
    tl.store(y_ptrs, acc, mask=(offs_co[:, None] < C_out) & (offs_l[None, :] < L))


def conv1d(x, weight, padding):
    N_, C_in, L = x.shape
    C_out, C_in2, ks = weight.shape
    assert C_in == C_in2 and ks == 2 * padding + 1  # "same" length output
    y = torch.empty((N_, C_out, L), device=x.device, dtype=torch.float32)
    BLOCK_CO = 64
    BLOCK_CI = 32
    BLOCK_L = 64
    grid = (triton.cdiv(L, BLOCK_L), triton.cdiv(C_out, BLOCK_CO), N_)
    conv1d_kernel[grid](
        x, weight, y,
        C_in, C_out, L,
        x.stride(0), x.stride(1), x.stride(2),
        weight.stride(0), weight.stride(1), weight.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        KS=ks, PADDING=padding,
        BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI, BLOCK_L=BLOCK_L,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, KSIZE) / math.sqrt(in_channels * KSIZE))

    def forward(self, x):
        return F.conv1d(x, self.weight, padding=PAD)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels, KSIZE) / math.sqrt(in_channels * KSIZE))

    def forward(self, x):
        return conv1d(x, self.weight, PAD)


def get_inputs():
    return [torch.randn(BATCH, C_IN, LENGTH)]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"BATCH": 2, "C_IN": 37, "C_OUT": 71, "LENGTH": 129},
    {"BATCH": 3, "C_IN": 71, "C_OUT": 37, "LENGTH": 67},
    {"BATCH": 2, "C_IN": 45, "C_OUT": 29, "LENGTH": 101},
]
