"""Instance normalisation of (B, C, L) data without affine parameters.

Computes
    y = F.instance_norm(x, eps=1e-5)
i.e. each (b, c) row of length L is normalised to zero mean / unit (biased) variance.

Shapes / dtypes:
    x: (B, C, L) fp16 -> y: (B, C, L) fp16
    benchmark: B=32, C=256, L=4096

Known problems:
- One program per (b, c) row holding the whole row in registers (BLOCK_L = L rounded
  up to a power of two); fine for L=4096 but it would spill / fail for very long rows,
  and non-power-of-two L wastes masked lanes.
- Statistics use a two-pass (mean, then centred variance) over the register tile,
  which is fine, but one row per program gives many short programs each ending in
  two cross-warp reductions.
- num_warps is a fixed guess, not tuned.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 32
C = 256
L = 4096
EPS = 1e-5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.instance_norm(x, eps=EPS)


@triton.jit
def _instance_norm_row_kernel(
    x_ptr, y_ptr, n_cols, eps,
    BLOCK_L: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_L)
    mask = offs < n_cols
    base = row * n_cols

    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(y_ptr + base + offs, (diff * rstd).to(y_ptr.dtype.element_ty), mask=mask)


def instance_norm_1d(x, eps=EPS):
    x = x.contiguous()
    bsz, c, l = x.shape
    y = torch.empty_like(x)
    BLOCK_L = triton.next_power_of_2(l)
    num_warps = 8 if BLOCK_L >= 4096 else 4
    _instance_norm_row_kernel[(bsz * c,)](x, y, l, eps, BLOCK_L=BLOCK_L, num_warps=num_warps)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return instance_norm_1d(x)


def get_inputs():
    x = torch.randn(B, C, L, dtype=torch.float16) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "C": 5, "L": 100},
    {"B": 3, "C": 37, "L": 129},
    {"B": 1, "C": 4, "L": 4096},
]
