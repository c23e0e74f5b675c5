"""GroupNorm with 4 groups and affine: torch.nn.GroupNorm(4, C, eps=1e-5)(x), x of shape (N, C, H, W).
Known problems:
- One program per (n, group): only N*4 = 64 programs for 64K elements each (very poor occupancy on a 132-SM GPU).
- Two passes over each group (stats, then normalize+affine).
- Variance from sum/sum-of-squares in fp32 (single pass, less robust than Welford).
- Per-element channel index via integer division to gather weight/bias; fixed block size, no autotune.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16
C = 256
H = 32
W = 32
GROUPS = 4
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, groups, c):
        super().__init__()
        self.norm = nn.GroupNorm(groups, c, eps=EPS, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(torch.linspace(0.5, 1.5, c))
            self.norm.bias.copy_(torch.linspace(-0.3, 0.3, c))

    def forward(self, x):
        return self.norm(x)


@triton.jit
def _groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, CPG, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    g = pid % G
    size = CPG * HW
    base = pid.to(tl.int64) * size
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, size, BLOCK):
        offs = start + offs0
        mask = offs < size
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        acc += v
        acc2 += v * v
    mean = tl.sum(acc, axis=0) / size
    var = tl.sum(acc2, axis=0) / size - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, size, BLOCK):
        offs = start + offs0
        mask = offs < size
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        ch = g * CPG + offs // HW
        w = tl.load(w_ptr + ch, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + ch, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd * w + b
        tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, groups, c):
        super().__init__()
        self.norm = nn.GroupNorm(groups, c, eps=EPS, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(torch.linspace(0.5, 1.5, c))
            self.norm.bias.copy_(torch.linspace(-0.3, 0.3, c))
        self.groups = groups

    def forward(self, x):
        x = x.contiguous()
        n, c = x.shape[0], x.shape[1]
        HW = x.numel() // (n * c)
        G = self.groups
        CPG = c // G
        y = torch.empty_like(x)
        _groupnorm_kernel[(n * G,)](x, self.norm.weight, self.norm.bias, y, c, HW, G, CPG, EPS,
                                    BLOCK=1024, num_warps=4)
        return y


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32) * 1.5 + 0.3]


def get_init_inputs():
    return [GROUPS, C]


TEST_SHAPES = [
    {"N": 2, "C": 8, "H": 5, "W": 7},
    {"N": 3, "C": 12, "H": 9, "W": 11},
    {"N": 2, "C": 16, "H": 13, "W": 6},
]
