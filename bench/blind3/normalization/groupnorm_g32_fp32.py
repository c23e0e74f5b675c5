"""GroupNorm with 32 groups and affine weight/bias (nn.GroupNorm(32, C), eps 1e-5), input (N, C, H, W) fp32.

Known problems:
- L72: one program per (sample, group): 1024 programs, each walking a 32768-element (128 KB) group serially in 1024-element chunks; modest parallelism and long dependent loops per program.
- L32-L49: the input is read twice from global memory (statistics pass at L35, normalise pass at L44); with all groups in flight the working set (128 MB) exceeds L2, so traffic is 1.5x the minimum.
- L39: variance as E[x^2] - mean^2 from one-pass fp32 sums is cancellation-prone when |mean| >> std (numerics, not speed).
- L45-L47: the channel index is recomputed per element with an integer division by HW, and weight/bias are gathered per element instead of loaded once per channel (loop over channels, then over HW).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
CHANNELS = 256
HEIGHT = 64
WIDTH = 64
NUM_GROUPS = 32


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    cpg = C // G
    group_size = cpg * HW
    base = n * C * HW + g * group_size
    acc_sum = tl.zeros((BLOCK,), dtype=tl.float32)
    acc_sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        acc_sum += x
        acc_sq += x * x
    mean = tl.sum(acc_sum, axis=0) / group_size
    var = tl.sum(acc_sq, axis=0) / group_size - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        c = g * cpg + offs // HW
        w = tl.load(w_ptr + c, mask=mask, other=0.0)
        b = tl.load(b_ptr + c, mask=mask, other=0.0)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + base + offs, y, mask=mask)


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        return self.gn(x)


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        g = self.gn.num_groups
        y = torch.empty_like(x)
        BLOCK = 1024
        grid = (n * g,)
        groupnorm_kernel[grid](x, self.gn.weight, self.gn.bias, y, c, h * w, g, self.gn.eps, BLOCK=BLOCK)
        return y


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)]


def get_init_inputs():
    return [NUM_GROUPS, CHANNELS]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 64, "HEIGHT": 8, "WIDTH": 8},
    {"BATCH": 3, "CHANNELS": 32, "HEIGHT": 7, "WIDTH": 9},
]
