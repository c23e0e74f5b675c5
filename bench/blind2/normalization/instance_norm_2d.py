"""InstanceNorm2d without affine: y[n,c] = (x[n,c] - mean) / sqrt(var + 1e-5) with mean/var (biased) over H*W of each plane, x fp32 NCHW (N, C, H, W) -> y fp32.

One Triton program handles one (n, c) plane, which is a contiguous run of
H*W floats in NCHW. The whole plane is loaded into a single power-of-two
block (BLOCK_HW = next_power_of_2(H*W), 4096 for 64x64), the mean and the
variance around the mean are reduced in registers, and the normalized plane
is stored back. Math is fp32.

Known problems:
- line 44: BLOCK_HW = next_power_of_2(H*W) keeps the whole plane in registers; fine for 64x64, but e.g. 256x256 (65536) would spill badly or fail to compile. There is no chunked loop fallback.
- line 46: default num_warps=4 for a 4096-element block: 32 fp32 values per thread live across two reductions; num_warps=8 would be a better fit.
- lines 33-35: two dependent full-block reductions (mean, then variance) serialize in each program; a single sum/sum-of-squares (or Welford) reduction would shorten the critical path (minor for a memory-bound kernel).
- line 45: the grid is N*C = 4096 programs of one plane each: fine here, but for small N*C with large planes the GPU would be under-filled since a plane is never split.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
CHANNELS = 128
HEIGHT = 64
WIDTH = 64


@triton.jit
def instance_norm_kernel(x_ptr, y_ptr, HW, eps, BLOCK_HW: tl.constexpr):
    plane = tl.program_id(0)
    base = plane * HW
    offs = tl.arange(0, BLOCK_HW)
    mask = offs < HW
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / HW
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / HW
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(y_ptr + base + offs, d * rstd, mask=mask)


def instance_norm(x, eps=1e-5):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    BLOCK_HW = triton.next_power_of_2(h * w)
    grid = (n * c,)
    instance_norm_kernel[grid](x, y, h * w, eps, BLOCK_HW=BLOCK_HW)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.instance_norm(x, eps=1e-5)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return instance_norm(x, 1e-5)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "CHANNELS": 5, "HEIGHT": 7, "WIDTH": 11},
    {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 37, "WIDTH": 29},
    {"BATCH": 4, "CHANNELS": 7, "HEIGHT": 13, "WIDTH": 71},
]
