"""GroupNorm: nn.GroupNorm(NUM_GROUPS, CHANNELS, eps=1e-5) with affine weight/bias, all fp16,
on x (BATCH, CHANNELS, HEIGHT, WIDTH) fp16.

Each (sample, group) owns a contiguous slab of (CHANNELS // NUM_GROUPS) * HEIGHT * WIDTH
elements.  The Triton version runs one program per (sample, group): a first loop over the
slab accumulates sum and sum of squares in fp32, a second loop re-reads it, normalizes, applies
the per-channel weight and bias and stores fp16.

Known problems:
- line 80: only BATCH*NUM_GROUPS = 256 programs, each streaming a 256 KB group slab serially, for about 268 MB of traffic; with about 2 programs per SM the H200 bandwidth is not saturated (the group reduction should be split over many programs).
- lines 51-65: x is read from HBM twice (statistics pass, then normalize pass).
- lines 66-68: per-element channel index (integer division by HW) and per-element gathered weight/bias loads, where a per-channel scalar would do.
- line 79: fixed BLOCK=1024 with default num_warps, no tuning.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
CHANNELS = 256
NUM_GROUPS = 8
HEIGHT = 64
WIDTH = 64
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels, eps=EPS, affine=True, dtype=torch.float16)

    def forward(self, x):
        return self.gn(x)


@triton.jit
def _groupnorm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C, HW, num_groups, group_numel, eps,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    n = pid // num_groups
    g = pid % num_groups
    cpg = C // num_groups
    base = n * C * HW + g * group_numel

    acc_sum = tl.zeros((BLOCK,), dtype=tl.float32)
    acc_sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_numel, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_numel
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        acc_sum += v
        acc_sq += v * v
    mean = tl.sum(acc_sum, axis=0) / group_numel
    var = tl.sum(acc_sq, axis=0) / group_numel - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)

    for start in range(0, group_numel, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_numel
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        c = g * cpg + offs // HW
        w = tl.load(w_ptr + c, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
        out = (v - mean) * rstd * w + b
        tl.store(y_ptr + base + offs, out.to(tl.float16), mask=mask)


def groupnorm(x, weight, bias, num_groups, eps):
    x = x.contiguous()
    N, C = x.shape[0], x.shape[1]
    HW = x.numel() // (N * C)
    group_numel = (C // num_groups) * HW
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (N * num_groups,)
    _groupnorm_kernel[grid](
        x, weight, bias, y,
        C, HW, num_groups, group_numel, eps,
        BLOCK=BLOCK,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels, eps=EPS, affine=True, dtype=torch.float16)

    def forward(self, x):
        return groupnorm(x, self.gn.weight, self.gn.bias, self.gn.num_groups, self.gn.eps)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float16)]


def get_init_inputs():
    return [NUM_GROUPS, CHANNELS]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 32, "NUM_GROUPS": 8, "HEIGHT": 16, "WIDTH": 16},
    {"BATCH": 3, "CHANNELS": 40, "NUM_GROUPS": 8, "HEIGHT": 7, "WIDTH": 9},
]
