"""InstanceNorm3d without affine: torch.nn.InstanceNorm3d(C, eps=1e-5, affine=False)(x), x of shape (N, C, D, H, W).
Known problems:
- One program per (n, c) instance: only N*C = 256 programs, each looping serially over 32768 elements (poor occupancy).
- Two passes over the data (stats, then normalize); the second read is not guaranteed to hit L2.
- Variance from sum/sum-of-squares in fp32 (single pass, less robust than Welford).
- Fixed block size and num_warps, no autotune.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 8
C = 32
D = 32
H = 32
W = 32
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.InstanceNorm3d(c, eps=EPS, affine=False)

    def forward(self, x):
        return self.norm(x)


@triton.jit
def _instance_norm_kernel(x_ptr, y_ptr, S, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    base = pid * S
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, S, BLOCK):
        offs = start + offs0
        mask = offs < S
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        acc += v
        acc2 += v * v
    mean = tl.sum(acc, axis=0) / S
    var = tl.sum(acc2, axis=0) / S - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, S, BLOCK):
        offs = start + offs0
        mask = offs < S
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + offs, ((v - mean) * rstd).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        x = x.contiguous()
        n, c = x.shape[0], x.shape[1]
        S = x.numel() // (n * c)
        y = torch.empty_like(x)
        _instance_norm_kernel[(n * c,)](x, y, S, EPS, BLOCK=1024, num_warps=4)
        return y


def get_inputs():
    return [torch.randn(N, C, D, H, W, dtype=torch.float32) * 2.0 + 0.5]


def get_init_inputs():
    return [C]


TEST_SHAPES = [
    {"N": 2, "C": 3, "D": 5, "H": 6, "W": 7},
    {"N": 1, "C": 4, "D": 9, "H": 10, "W": 13},
    {"N": 3, "C": 2, "D": 7, "H": 11, "W": 17},
]
