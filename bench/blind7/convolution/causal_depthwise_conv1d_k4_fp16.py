"""Causal depthwise 1-D convolution, kernel 4, with bias.

Computes
    y = F.conv1d(F.pad(x, (3, 0)), w, b, groups=C)
i.e. y[b, c, t] = bias[c] + sum_{k=0..3} w[c, 0, k] * x[b, c, t + k - 3]
(x taken as zero for negative time indices).

Shapes / dtypes:
    x: (B, C, L) fp16, w: (C, 1, 4) fp16, b: (C,) fp16 -> y: (B, C, L) fp16
    benchmark: B=8, C=2048, L=4096

Known problems:
- Each of the 4 taps issues its own (shifted, masked) global load of the x tile; the
  overlap is only caught by the cache, there is no explicit reuse of one loaded tile.
- One program per (row, BLOCK_L chunk) re-loads the 4 weights and the bias every time,
  and BLOCK_L / num_warps are fixed guesses rather than tuned.
- The grid is 2-D with B*C rows on axis 0; no attempt to process several channels per
  program, so small L would give tiny programs with poor occupancy.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 8
C = 2048
L = 4096
KSIZE = 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        c = x.shape[1]
        k = w.shape[-1]
        return F.conv1d(F.pad(x, (k - 1, 0)), w, b, groups=c)


@triton.jit
def _causal_dwconv1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C, L,
    K: tl.constexpr,
    BLOCK_L: tl.constexpr,
):
    row = tl.program_id(0)          # row = b * C + c
    pid_l = tl.program_id(1)
    c = row % C

    offs = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    out_mask = offs < L
    row_base = row.to(tl.int64) * L

    acc = tl.zeros([BLOCK_L], dtype=tl.float32)
    for k in tl.static_range(K):
        src = offs + (k - (K - 1))
        m = out_mask & (src >= 0)
        xv = tl.load(x_ptr + row_base + src, mask=m, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + c * K + k).to(tl.float32)
        acc += xv * wv
    acc += tl.load(b_ptr + c).to(tl.float32)
    tl.store(y_ptr + row_base + offs, acc.to(y_ptr.dtype.element_ty), mask=out_mask)


def causal_dwconv1d(x, w, b, BLOCK_L=1024):
    x = x.contiguous()
    w = w.contiguous()
    b = b.contiguous()
    bsz, c, l = x.shape
    k = w.shape[-1]
    y = torch.empty_like(x)
    grid = (bsz * c, triton.cdiv(l, BLOCK_L))
    _causal_dwconv1d_kernel[grid](x, w, b, y, c, l, K=k, BLOCK_L=BLOCK_L, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w, b):
        return causal_dwconv1d(x, w, b)


def get_inputs():
    x = torch.randn(B, C, L, dtype=torch.float16)
    w = (torch.randn(C, 1, KSIZE) * 0.5).to(torch.float16)
    b = torch.randn(C, dtype=torch.float16)
    return [x, w, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "C": 8, "L": 100},
    {"B": 1, "C": 37, "L": 1029},
    {"B": 3, "C": 5, "L": 3},
]
