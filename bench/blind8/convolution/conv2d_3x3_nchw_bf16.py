"""conv2d, 3x3 kernel, stride 1, padding 1, no bias, NCHW layout, bf16.

y[n, co, h, w] = sum_{ci, kh, kw} x[n, ci, h + kh - 1, w + kw - 1] * weight[co, ci, kh, kw]
(zero padding outside the image). x: (N, C_in, H, W) bf16, weight: nn.Conv2d parameter
(C_out, C_in, 3, 3) bf16, y: (N, C_out, H, W) bf16. Computed as an implicit GEMM: rows are
output pixels (flattened n, h, w), columns are output channels, reduction over 9 taps x C_in,
fp32 accumulation.

Known problems:
- L60-61 (`a = tl.load(...)`): the activation tile is gathered from NCHW with stride H*W between input channels, so only the pixel dimension is contiguous, and each of the 9 taps re-reads the same x from L2/HBM (no shared-memory halo reuse across taps).
- L63-64 (`b = tl.load(...)`): the weight tile is read with stride 9 along C_in and 9*C_in along C_out (uncoalesced), and re-read by every pixel program instead of being pre-transposed once to a [9, C_in, C_out] layout.
- L51-69: reduction is 9 taps x cdiv(C_in, BLOCK_CI) = 18 small tl.dot calls with K=32 each; block sizes fixed at L81 (64/64/32) with default num_warps/num_stages, no autotune.
- L45-48, L53-56: per-pixel integer div/mod for (n, h, w) and per-tap boundary masks recomputed in the loop.
- L71-72: a 64-pixel tile can straddle image rows/images, so the NCHW store is only partly contiguous; output channels are strided by H*W within a tile.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 16
C_IN = 64
C_OUT = 128
H = 56
W = 56

TEST_SHAPES = [
    {"N": 2, "C_IN": 20, "C_OUT": 24, "H": 7, "W": 9},
    {"N": 1, "C_IN": 32, "C_OUT": 64, "H": 8, "W": 8},
]


@triton.jit
def conv2d_3x3_nchw_kernel(x_ptr, w_ptr, y_ptr, N, C_in, C_out, H, W,
                           BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr,
                           DOT_FP32: tl.constexpr):
    pid_p = tl.program_id(0)
    pid_co = tl.program_id(1)
    HW = H * W
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p_mask = offs_p < N * HW
    co_mask = offs_co < C_out
    n = offs_p // HW
    hw = offs_p % HW
    oh = hw // W
    ow = hw % W

    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for kh in range(3):
        for kw in range(3):
            ih = oh + kh - 1
            iw = ow + kw - 1
            pix_ok = p_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_base = n * (C_in * HW) + ih * W + iw
            for ci0 in range(0, C_in, BLOCK_CI):
                offs_ci = ci0 + tl.arange(0, BLOCK_CI)
                ci_mask = offs_ci < C_in
                a = tl.load(x_ptr + x_base[:, None] + offs_ci[None, :] * HW,
                            mask=pix_ok[:, None] & ci_mask[None, :], other=0.0)
                # weight[co, ci, kh, kw] as a [BLOCK_CI, BLOCK_CO] tile
                b = tl.load(w_ptr + offs_co[None, :] * (C_in * 9) + offs_ci[:, None] * 9 + (kh * 3 + kw),
                            mask=ci_mask[:, None] & co_mask[None, :], other=0.0)
                if DOT_FP32:
                    # the CPU interpreter mis-computes tl.dot on bf16 operands; bf16 is exact in fp32
                    a = a.to(tl.float32)
                    b = b.to(tl.float32)
                acc += tl.dot(a, b)

    y_off = n[:, None] * (C_out * HW) + offs_co[None, :] * HW + hw[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=p_mask[:, None] & co_mask[None, :])


def conv2d_3x3_nchw(x, weight):
    x = x.contiguous()
    weight = weight.contiguous()
    n, c_in, h, w = x.shape
    c_out = weight.shape[0]
    y = torch.empty((n, c_out, h, w), dtype=x.dtype, device=x.device)
    BLOCK_P, BLOCK_CO, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(n * h * w, BLOCK_P), triton.cdiv(c_out, BLOCK_CO))
    conv2d_3x3_nchw_kernel[grid](x, weight, y, n, c_in, c_out, h, w,
                                 BLOCK_P=BLOCK_P, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI,
                                 DOT_FP32=(x.device.type == "cpu"))
    return y


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=1, padding=1, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return self.conv(x)


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=1, padding=1, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return conv2d_3x3_nchw(x, self.conv.weight)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=torch.bfloat16)]


def get_init_inputs():
    return [C_IN, C_OUT]
