"""Depthwise 5x5 conv, stride 2, padding 2, with bias, fp16.

nn.Conv2d(C, C, 5, stride=2, padding=2, groups=C, bias=True).half() applied
to x (N, C, H, W) fp16; output (N, C, (H-1)//2+1, (W-1)//2+1) fp16.
Benchmark shape: N=32, C=128, H=112, W=112 (output 32x128x56x56).

Known problems:
- lines 55-63: each of the 25 taps issues a separate masked gather of 256 stride-2 fp16 elements (ih*W + iw, lines 56-61); accesses cannot be vectorised, half of every sector fetched per load is unused, and each input element is reloaded ~6x from L1/L2 instead of reusing loaded rows in registers.
- line 62: the weight is reloaded as a scalar load inside the 25-tap loop of every program instead of once per program as a vector.
- lines 48-51, 56-60: flattened 1-D output block needs integer // and % per element plus four bounds compares per tap for padding, even for interior blocks.
- lines 76-77: BLOCK=256 over OH*OW=3136 gives 13 blocks per plane with the last one ~75% masked off; one (n, c) plane per program row, default num_warps, no autotuning or 2-D spatial tiling.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C = 128
H = 112
W = 112
KSIZE = 5
STRIDE = 2
PAD = 2


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, KSIZE, stride=STRIDE, padding=PAD,
                              groups=channels, bias=True).half()

    def forward(self, x):
        return self.conv(x)


@triton.jit
def dwconv2d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C, H, W, OH, OW,
    KS: tl.constexpr, STR: tl.constexpr, PD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid_nc = tl.program_id(0)
    pid_p = tl.program_id(1)
    c = pid_nc % C

    offs = pid_p * BLOCK + tl.arange(0, BLOCK)
    mask_o = offs < OH * OW
    oh = offs // OW
    ow = offs % OW

    x_base = x_ptr + pid_nc * H * W
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in tl.static_range(KS):
        ih = oh * STR - PD + kh
        mask_h = (ih >= 0) & (ih < H)
        for kw in tl.static_range(KS):
            iw = ow * STR - PD + kw
            m = mask_o & mask_h & (iw >= 0) & (iw < W)
            xv = tl.load(x_base + ih * W + iw, mask=m, other=0.0).to(tl.float32)
            wv = tl.load(w_ptr + c * KS * KS + kh * KS + kw).to(tl.float32)
            acc += xv * wv

    acc += tl.load(b_ptr + c).to(tl.float32)
    tl.store(y_ptr + pid_nc * OH * OW + offs, acc.to(y_ptr.dtype.element_ty), mask=mask_o)


def depthwise_conv2d(x, weight, bias):
    x = x.contiguous()
    Nb, Cc, Hh, Ww = x.shape
    OH = (Hh + 2 * PAD - KSIZE) // STRIDE + 1
    OW = (Ww + 2 * PAD - KSIZE) // STRIDE + 1
    y = torch.empty((Nb, Cc, OH, OW), device=x.device, dtype=x.dtype)
    w = weight.contiguous()
    BLOCK = 256
    grid = (Nb * Cc, triton.cdiv(OH * OW, BLOCK))
    dwconv2d_kernel[grid](
        x, w, bias, y,
        Cc, Hh, Ww, OH, OW,
        KS=KSIZE, STR=STRIDE, PD=PAD, BLOCK=BLOCK,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, KSIZE, stride=STRIDE, padding=PAD,
                              groups=channels, bias=True).half()

    def forward(self, x):
        return depthwise_conv2d(x, self.conv.weight, self.conv.bias)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float16)]


def get_init_inputs():
    return [C]


TEST_SHAPES = [
    {"N": 2, "C": 8, "H": 32, "W": 32},
    {"N": 3, "C": 5, "H": 37, "W": 29},
]
