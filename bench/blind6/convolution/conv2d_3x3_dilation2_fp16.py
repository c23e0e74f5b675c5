"""3x3 dilated 2-D convolution (dilation 2, padding 2, stride 1, no bias).

nn.Conv2d(64, 64, 3, padding=2, dilation=2, bias=False).half() applied to an
input (N=16, C=64, H=64, W=64) fp16 in NCHW layout. Output (16, 64, 64, 64) fp16.

Known problems:
- lines 68-70: weights are read straight from the OIHW tensor as a (ci, co) tile whose elements are 9 (ci) and 576 (co) halves apart: an uncoalesced gather, repeated for every tap and channel block by every one of the 1024 programs; no pre-packed (kh, kw, ci, co) weight layout.
- lines 57-71: each program re-reads the same input pixels from global/L2 once per tap (9 times) instead of staging a haloed input tile once; the dilated taps (ow-2, ow, ow+2) also give unaligned, masked addresses that defeat vectorized loads.
- lines 63, 84: BLOCK_CI=32 with C_in=64 makes the reduction 18 small K=32 dots split across three nested loops, too short for software pipelining to hide load latency.
- lines 84-85: one fixed 64x64 tile with default num_warps/num_stages, no autotuning.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16
C_IN = 64
C_OUT = 64
H = 64
W = 64

KSIZE = 3
PAD = 2
DIL = 2


@triton.jit
def conv2d_dil_kernel(
    x_ptr, w_ptr, y_ptr,
    NB, C_in, H, W, C_out, H_out, W_out,
    stride_xn, stride_xc, stride_xh, stride_xw,
    stride_wo, stride_wi, stride_wh, stride_ww,
    stride_yn, stride_yc, stride_yh, stride_yw,
    KS: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr,
):
    # implicit GEMM: rows = output pixels (n, oh, ow), cols = output channels,
    # reduction = (input channel, kh, kw)
    pid_p = tl.program_id(0)
    pid_co = tl.program_id(1)

    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_ci = tl.arange(0, BLOCK_CI)

    P = NB * H_out * W_out
    p_mask = offs_p < P
    co_mask = offs_co < C_out

    n_idx = offs_p // (H_out * W_out)
    hw = offs_p % (H_out * W_out)
    oh = hw // W_out
    ow = hw % W_out

    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for kh in range(KS):
        for kw in range(KS):
            ih = oh - PAD + kh * DIL
            iw = ow - PAD + kw * DIL
            in_bounds = p_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_base = x_ptr + n_idx * stride_xn + ih * stride_xh + iw * stride_xw
            for c0 in range(0, C_in, BLOCK_CI):
                ci = c0 + offs_ci
                ci_mask = ci < C_in
                x_ptrs = x_base[:, None] + ci[None, :] * stride_xc
                x_tile = tl.load(x_ptrs, mask=in_bounds[:, None] & ci_mask[None, :], other=0.0)
                w_ptrs = (w_ptr + offs_co[None, :] * stride_wo + ci[:, None] * stride_wi
                          + kh * stride_wh + kw * stride_ww)
                w_tile = tl.load(w_ptrs, mask=ci_mask[:, None] & co_mask[None, :], other=0.0)
                acc += tl.dot(x_tile, w_tile)

    y_ptrs = (y_ptr + n_idx[:, None] * stride_yn + offs_co[None, :] * stride_yc
              + oh[:, None] * stride_yh + ow[:, None] * stride_yw)
    tl.store(y_ptrs, acc.to(tl.float16), mask=p_mask[:, None] & co_mask[None, :])


def conv2d_dilated(x, weight):
    NB, C_in, Hv, Wv = x.shape
    C_out = weight.shape[0]
    H_out = Hv + 2 * PAD - DIL * (KSIZE - 1)
    W_out = Wv + 2 * PAD - DIL * (KSIZE - 1)
    y = torch.empty((NB, C_out, H_out, W_out), device=x.device, dtype=x.dtype)
    BLOCK_P, BLOCK_CO, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(NB * H_out * W_out, BLOCK_P), triton.cdiv(C_out, BLOCK_CO))
    conv2d_dil_kernel[grid](
        x, weight, y,
        NB, C_in, Hv, Wv, C_out, H_out, W_out,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        weight.stride(0), weight.stride(1), weight.stride(2), weight.stride(3),
        y.stride(0), y.stride(1), y.stride(2), y.stride(3),
        KS=KSIZE, PAD=PAD, DIL=DIL,
        BLOCK_P=BLOCK_P, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI,
    )
    return y


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, KSIZE, padding=PAD,
                              dilation=DIL, bias=False).half()

    def forward(self, x):
        return self.conv(x)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, KSIZE, padding=PAD,
                              dilation=DIL, bias=False).half()

    def forward(self, x):
        return conv2d_dilated(x, self.conv.weight)


def get_inputs():
    x = torch.randn(N, C_IN, H, W, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"N": 2, "C_IN": 64, "C_OUT": 64, "H": 16, "W": 16},
    {"N": 3, "C_IN": 37, "C_OUT": 100, "H": 13, "W": 11},
]
