"""GroupNorm with affine weight and bias: nn.GroupNorm(G, C) on an (BATCH, C, H, W) fp32 tensor.

Known problems:
- lines 53-56 and 62-69: two passes over each 32 KB group (statistics, then normalize) load x twice
- lines 65-68: the channel index is an integer division per element and weight/bias are gathered per element, instead of looping channel by channel with scalar weight and bias
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
C = 256
H = 32
W = 32
G = 32

TEST_SHAPES = [
    {"BATCH": 2, "C": 6, "G": 3, "H": 5, "W": 7},
    {"BATCH": 1, "C": 32, "G": 32, "H": 13, "W": 11},
]


def _make_groupnorm(num_groups, num_channels):
    gn = nn.GroupNorm(num_groups, num_channels)
    # random affine parameters so that weight and bias are really exercised
    with torch.no_grad():
        gn.weight.normal_()
        gn.bias.normal_()
    return gn


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = _make_groupnorm(num_groups, num_channels)

    def forward(self, x):
        return self.gn(x)


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_channels, n_groups, hw, eps,
                     BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # one program per (sample, group)
    g = pid % n_groups
    ch_per_group = n_channels // n_groups
    group_size = ch_per_group * hw
    base = pid * group_size  # groups are contiguous in NCHW
    # statistics pass: sum and sum of squares
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + offs, mask=offs < group_size, other=0.0)
        s += v
        sq += v * v
    mean = tl.sum(s, axis=0) / group_size
    var = tl.maximum(tl.sum(sq, axis=0) / group_size - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    # normalize pass
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        ch = g * ch_per_group + offs // hw
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + ch, mask=mask, other=0.0)
        b = tl.load(b_ptr + ch, mask=mask, other=0.0)
        tl.store(y_ptr + base + offs, (v - mean) * rstd * w + b, mask=mask)


def groupnorm(x, num_groups, weight, bias, eps):
    x = x.contiguous()
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // (n * c)
    y = torch.empty_like(x)
    BLOCK = 1024
    groupnorm_kernel[(n * num_groups,)](x, weight, bias, y, c, num_groups, hw, eps, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = _make_groupnorm(num_groups, num_channels)

    def forward(self, x):
        return groupnorm(x, self.gn.num_groups, self.gn.weight, self.gn.bias, self.gn.eps)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return [G, C]
