"""
GroupNorm (16 groups) followed by SiLU, bf16.

Computes y = silu(nn.GroupNorm(GROUPS, C)(x)) with GROUPS=16, eps 1e-5, affine
weight/bias, module in bfloat16, for x of shape (N, C, H, W) bfloat16; output
(N, C, H, W) bfloat16. Group statistics, affine and SiLU are computed in fp32.
Benchmark shape: N=16, C=256, H=64, W=64 (GROUPS=16).

Known problems:
- L40-L45: one program per (sample, group): only N * GROUPS = 256 programs, each serially streaming a 64K-element group; less than two programs per SM on an H200 and no split of a group across programs.
- L58-L61: x is read twice from global memory (statistics pass, then normalise pass) on top of the write: 3 memory passes instead of 2.
- L62-L64: per-element integer division offs // HW to find the channel, plus gathered weight/bias loads per element instead of per channel.
- L71-L74: BLOCK = 1024 and num_warps are fixed guesses, not tuned; x.contiguous() copies a non-contiguous input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 16
C = 256
H = 64
W = 64
GROUPS = 16


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, dtype=torch.bfloat16)

    def forward(self, x):
        return F.silu(self.gn(x))


@triton.jit
def groupnorm_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, eps,
                          BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    cpg = C // G
    group_size = cpg * HW
    base = n * C * HW + g * group_size
    acc_s = tl.zeros((BLOCK,), dtype=tl.float32)
    acc_ss = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        acc_s += x
        acc_ss += x * x
    mean = tl.sum(acc_s, axis=0) / group_size
    var = tl.sum(acc_ss, axis=0) / group_size - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < group_size
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        c = g * cpg + offs // HW
        w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        y = y / (1.0 + tl.exp(-y))
        tl.store(y_ptr + base + offs, y.to(tl.bfloat16), mask=mask)


def groupnorm_silu(x, weight, bias, num_groups, eps):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (n * num_groups,)
    groupnorm_silu_kernel[grid](x, weight, bias, y, c, h * w, num_groups, eps,
                                BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, dtype=torch.bfloat16)

    def forward(self, x):
        return groupnorm_silu(x, self.gn.weight, self.gn.bias, self.gn.num_groups, self.gn.eps)


def get_inputs():
    x = torch.randn(N, C, H, W, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return [GROUPS, C]


TEST_SHAPES = [
    {"N": 2, "C": 32, "H": 7, "W": 9, "GROUPS": 16},
    {"N": 1, "C": 48, "H": 13, "W": 13, "GROUPS": 16},
    {"N": 2, "C": 64, "H": 16, "W": 16, "GROUPS": 16},
]
