"""GroupNorm with affine weight/bias: y[n,c,h,w] = (x - mean_g) / sqrt(var_g + 1e-5) * weight[c] + bias[c], x fp32 NCHW (N, C, H, W), stats over each (n, group) of C/G channels x H x W.

One Triton program handles one (sample, group) pair. In NCHW the C/G
channels of a group are contiguous, so the group is a flat run of
(C/G)*H*W floats. A first loop over that run in BLOCK-sized chunks
accumulates sum and sum of squares (variance = E[x^2] - mean^2); a second
loop re-reads the run, recovers the channel of every element with an
integer division by H*W, gathers weight/bias for it, normalizes and stores.

Known problems:
- line 66: the grid is only N*G = 512 programs, each streaming a 128 KB group serially (32 iterations per loop); with 4 warps per program that is ~4 programs / 16 warps per SM, too little memory parallelism for a bandwidth-bound kernel. Splitting each group across several programs (partial sums + a second pass) would fill the GPU.
- lines 50-53: the normalize loop re-reads the whole group from global memory after the stats loop; 512 groups x 128 KB = 64 MB does not reliably stay in L2, so this is close to 2 reads + 1 write of HBM traffic.
- line 46: variance as E[x^2] - mean^2 in fp32 loses precision when |mean| >> std (catastrophic cancellation); clamped at 0 but not accurate. Welford or a two-pass variance would be safer.
- lines 54-56: per element integer division offs // HW and two gathered loads of weight/bias, although the channel is constant across HW-sized runs; looping per channel (scale/shift computed once per channel) would avoid both.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
CHANNELS = 256
HEIGHT = 64
WIDTH = 64
GROUPS = 32


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    cpg = C // G
    group_size = cpg * HW
    base = n * C * HW + g * group_size  # channels of a group are contiguous in NCHW

    acc_sum = tl.zeros([BLOCK], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        acc_sum += x
        acc_sq += x * x
    mean = tl.sum(acc_sum, axis=0) / group_size
    var = tl.sum(acc_sq, axis=0) / group_size - mean * mean
    var = tl.maximum(var, 0.0)
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


def groupnorm(x, weight, bias, num_groups, eps=1e-5):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (n * num_groups,)
    groupnorm_kernel[grid](x, weight, bias, y, c, h * w, num_groups, eps, BLOCK=BLOCK)
    return y


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.num_groups = num_groups
        self.weight = nn.Parameter(torch.randn(num_channels))
        self.bias = nn.Parameter(torch.randn(num_channels))

    def forward(self, x):
        return torch.nn.functional.group_norm(x, self.num_groups, self.weight, self.bias, eps=1e-5)


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.num_groups = num_groups
        self.weight = nn.Parameter(torch.randn(num_channels))
        self.bias = nn.Parameter(torch.randn(num_channels))

    def forward(self, x):
        return groupnorm(x, self.weight, self.bias, self.num_groups, 1e-5)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)]


def get_init_inputs():
    return [GROUPS, CHANNELS]


TEST_SHAPES = [
    {"BATCH": 3, "CHANNELS": 12, "HEIGHT": 7, "WIDTH": 9, "GROUPS": 4},
    {"BATCH": 2, "CHANNELS": 10, "HEIGHT": 37, "WIDTH": 13, "GROUPS": 5},
    {"BATCH": 5, "CHANNELS": 6, "HEIGHT": 11, "WIDTH": 23, "GROUPS": 3},
]
