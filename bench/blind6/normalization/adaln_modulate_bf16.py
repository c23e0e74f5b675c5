"""adaLN modulation, bf16.

x: (B, T, C) bf16; shift, scale: (B, C) bf16.
y = layer_norm(x over C, no affine, eps=1e-6) * (1 + scale[:, None, :]) + shift[:, None, :]
y: (B, T, C) bf16. Benchmark shape: B=16, T=1024, C=1152.

Known problems:
- lines 39-40, 61: BLOCK_C = next_power_of_2(1152) = 2048, so 44% of the lanes are masked off in every load, reduction and store
- line 63: launched with the default num_warps=4 for a 2048-wide row (16 fp32 values per thread), not tuned
- lines 49-50: shift/scale rows are reloaded by each of the T programs of a batch (served from L2, minor)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 16
T = 1024
C = 1152
EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, shift, scale):
        y = F.layer_norm(x, (x.shape[-1],), eps=EPS)
        return y * (1 + scale[:, None, :]) + shift[:, None, :]


@triton.jit
def adaln_modulate_kernel(x_ptr, shift_ptr, scale_ptr, y_ptr,
                          T_LEN, NC, eps,
                          BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    b = row // T_LEN
    cols = tl.arange(0, BLOCK_C)
    mask = cols < NC

    x = tl.load(x_ptr + row * NC + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / NC
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / NC
    rstd = 1.0 / tl.sqrt(var + eps)
    xn = xc * rstd

    sc = tl.load(scale_ptr + b * NC + cols, mask=mask, other=0.0).to(tl.float32)
    sh = tl.load(shift_ptr + b * NC + cols, mask=mask, other=0.0).to(tl.float32)
    y = xn * (1.0 + sc) + sh
    tl.store(y_ptr + row * NC + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def adaln_modulate(x, shift, scale):
    x = x.contiguous()
    shift = shift.contiguous()
    scale = scale.contiguous()
    bsz, t, c = x.shape
    y = torch.empty_like(x)
    BLOCK_C = triton.next_power_of_2(c)
    grid = (bsz * t,)
    adaln_modulate_kernel[grid](x, shift, scale, y, t, c, EPS, BLOCK_C=BLOCK_C)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, shift, scale):
        return adaln_modulate(x, shift, scale)


def get_inputs():
    x = torch.randn(B, T, C, dtype=torch.bfloat16)
    shift = torch.randn(B, C, dtype=torch.bfloat16)
    scale = torch.randn(B, C, dtype=torch.bfloat16)
    return [x, shift, scale]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "T": 16, "C": 64},
    {"B": 3, "T": 37, "C": 100},
    {"B": 2, "T": 5, "C": 1152},
]
