"""Depthwise conv1d, kernel 7, stride 1, padding 3 (same length, non-causal), with bias, bf16.

x: (N, C, L) bf16, weight: nn.Conv1d(C, C, 7, groups=C) parameter (C, 1, 7) bf16, bias (C,) bf16;
y[n, c, l] = bias[c] + sum_{k=0..6} x[n, c, l + k - 3] * weight[c, 0, k]   (zero padding),
y: (N, C, L) bf16. Each program handles one (n, c) row and a block of positions; fp32 accumulation.

Known problems:
- L44-49: 7 separate shifted loads of the same x row (each element is loaded 7 times, 6 of them misaligned); a single load of a BLOCK_L+6 halo tile with register shifts would cut L1/L2 traffic 7x.
- L48, L50: 7 scalar weight loads and 1 bias load per program, repeated for every L-block of the same channel (4 programs per row at L=4096).
- L60-62: BLOCK_L=1024 fixed with default num_warps=4 and no autotune; one (n, c) row per program with only L/1024 = 4 programs per row.

"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 16
C = 768
L = 4096

TEST_SHAPES = [
    {"N": 2, "C": 5, "L": 1500},
    {"N": 1, "C": 3, "L": 2048},
    {"N": 2, "C": 4, "L": 5},
]

KSIZE = 7
PAD = 3


@triton.jit
def dwconv1d_k7_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, L,
                       K: tl.constexpr, PAD: tl.constexpr, BLOCK_L: tl.constexpr):
    row = tl.program_id(0)  # n * C + c
    pid_l = tl.program_id(1)
    c = row % C
    offs = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    mask = offs < L
    x_row = x_ptr + row * L

    acc = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for k in tl.static_range(K):
        idx = offs + (k - PAD)
        m = (idx >= 0) & (idx < L)
        xv = tl.load(x_row + idx, mask=m, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + c * K + k).to(tl.float32)
        acc += xv * wv
    acc += tl.load(b_ptr + c).to(tl.float32)
    tl.store(y_ptr + row * L + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


def dwconv1d_k7(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    n, c, l = x.shape
    y = torch.empty_like(x)
    BLOCK_L = 1024
    grid = (n * c, triton.cdiv(l, BLOCK_L))
    dwconv1d_k7_kernel[grid](x, weight, bias, y, c, l, K=KSIZE, PAD=PAD, BLOCK_L=BLOCK_L)
    return y


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, KSIZE, stride=1, padding=PAD, groups=channels,
                              bias=True).to(torch.bfloat16)

    def forward(self, x):
        return self.conv(x)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, KSIZE, stride=1, padding=PAD, groups=channels,
                              bias=True).to(torch.bfloat16)

    def forward(self, x):
        return dwconv1d_k7(x, self.conv.weight, self.conv.bias)


def get_inputs():
    return [torch.randn(N, C, L, dtype=torch.bfloat16)]


def get_init_inputs():
    return [C]
