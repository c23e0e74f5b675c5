"""out = conv1d(x, weight, bias, padding=3, groups=CHANNELS): depthwise 1D convolution, kernel size 7, fp32.

x is (BATCH, CHANNELS, LENGTH), weight (CHANNELS, 1, 7), bias (CHANNELS,); the output has the input's shape. One program
per (BLOCK_L positions, batch * channel row): the 7 taps are unrolled, each a masked load of the input shifted by
the tap offset (zeros outside [0, LENGTH) are the padding) times that channel's scalar weight.

Known problems:
- lines 42-45: the 7 taps are 7 separate masked loads of overlapping windows shifted by -3..3 elements: every input element is fetched 7 times from L1/L2, 7 bound masks are evaluated, and the shifted (unaligned) addresses keep 6 of the 7 loads from being vectorised to 128-bit accesses, instead of loading the tile plus a 6-element halo once
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
CHANNELS = 256
LENGTH = 4096
KERNEL_SIZE = 7


@triton.jit
def depthwise_conv1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C, L,
    stride_xn, stride_xc, stride_xl,
    stride_wc, stride_wk,
    stride_yn, stride_yc, stride_yl,
    KSIZE: tl.constexpr, PAD: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_l = tl.program_id(0)
    row = tl.program_id(1)
    n = row // C
    c = row % C

    offs = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    x_row = x_ptr + n * stride_xn + c * stride_xc

    acc = tl.zeros((BLOCK_L,), dtype=tl.float32) + tl.load(b_ptr + c)
    for k in tl.static_range(KSIZE):
        pos = offs + (k - PAD)
        xv = tl.load(x_row + pos * stride_xl, mask=(pos >= 0) & (pos < L), other=0.0)
        wk = tl.load(w_ptr + c * stride_wc + k * stride_wk)
        acc += xv * wk

    tl.store(y_ptr + n * stride_yn + c * stride_yc + offs * stride_yl, acc, mask=offs < L)


def depthwise_conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    nb, c, length = x.shape
    ksize = weight.shape[2]
    assert weight.shape == (c, 1, ksize) and ksize % 2 == 1
    y = torch.empty_like(x)
    block_l = 1024
    grid = (triton.cdiv(length, block_l), nb * c)
    depthwise_conv1d_kernel[grid](
        x, weight, bias, y,
        c, length,
        x.stride(0), x.stride(1), x.stride(2),
        weight.stride(0), weight.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        KSIZE=ksize, PAD=ksize // 2, BLOCK_L=block_l,
        num_warps=4,
    )
    return y


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, 1, kernel_size) / math.sqrt(kernel_size))
        self.bias = nn.Parameter(torch.randn(channels))
        self.padding = kernel_size // 2

    def forward(self, x):
        return torch.nn.functional.conv1d(x, self.weight, self.bias, padding=self.padding, groups=x.shape[1])


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, 1, kernel_size) / math.sqrt(kernel_size))
        self.bias = nn.Parameter(torch.randn(channels))
        self.padding = kernel_size // 2

    def forward(self, x):
        return depthwise_conv1d(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 3, "LENGTH": 37},
    {"BATCH": 1, "CHANNELS": 5, "LENGTH": 1029},
]
