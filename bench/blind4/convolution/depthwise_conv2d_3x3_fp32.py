"""Depthwise 3x3 convolution, stride 1, padding 1, with bias: nn.Conv2d(C, C, 3, padding=1, groups=C).

x is (BATCH, CHANNELS, HEIGHT, WIDTH) fp32; weight (C, 1, 3, 3), bias (C,); output same shape as x.

Known problems:
- L40-43: 1D flattened pixel blocks with integer // and % per element to recover (h, w).
- L46-53: 9 separate masked global loads per output pixel; each input is re-fetched 9 times through
  L1/L2 instead of loading a 2D (tile + halo) block once and reusing it.
- L63-64: BLOCK = 1024 over 112*112 = 12544 pixels gives 13 blocks per plane, the last only 25% full;
  no tuning of BLOCK/num_warps.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
CHANNELS = 128
HEIGHT = 112
WIDTH = 112


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def dwconv3x3_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, H, W,
                     BLOCK: tl.constexpr):
    # one program per (n*c plane, block of BLOCK flattened output pixels)
    pid_nc = tl.program_id(0)
    pid_p = tl.program_id(1)
    c = pid_nc % C
    HW = H * W
    offs = pid_p * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    h = offs // W
    w = offs % W
    plane = pid_nc.to(tl.int64) * HW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in tl.static_range(3):
        for kw in tl.static_range(3):
            ih = h + (kh - 1)
            iw = w + (kw - 1)
            m = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            v = tl.load(x_ptr + plane + ih * W + iw, mask=m, other=0.0)
            wt = tl.load(w_ptr + c * 9 + kh * 3 + kw)
            acc += v * wt
    acc += tl.load(b_ptr + c)
    tl.store(y_ptr + plane + offs, acc, mask=mask)


def dwconv3x3(x, weight, bias):
    x = x.contiguous()
    n, c, h, w = x.shape
    weight = weight.contiguous()
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (n * c, triton.cdiv(h * w, BLOCK))
    dwconv3x3_kernel[grid](x, weight, bias, y, c, h, w, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        return dwconv3x3(x, self.conv.weight, self.conv.bias)


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [CHANNELS]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 13, "WIDTH": 17},
    {"BATCH": 1, "CHANNELS": 4, "HEIGHT": 32, "WIDTH": 32},
    {"BATCH": 2, "CHANNELS": 5, "HEIGHT": 37, "WIDTH": 29},
]
