"""Margin ranking loss (mean reduction), fp32.

loss = mean(max(0, -y * (x1 - x2) + margin)), margin = 0.1.
x1, x2: (L,) fp32, y: (L,) fp32 with values in {-1, +1} -> scalar fp32.
Benchmark shape: L = 16777216.

Known problems:
- line 43: one fp32 atomic_add per 1024-element block, 16384 atomics onto a single address, serialized at L2 (and the order of the float sum is nondeterministic).
- lines 49-50: one small block per program; a persistent grid-stride loop with a per-program accumulator (or a two-stage reduction) would cut the atomics to about one per SM and amortize per-program overhead.
- line 48: torch.zeros launches a separate memset kernel before the main kernel (small, fixed overhead).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

L = 16777216

MARGIN = 0.1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x1, x2, y):
        return F.margin_ranking_loss(x1, x2, y, margin=MARGIN)


@triton.jit
def _margin_ranking_kernel(x1_ptr, x2_ptr, y_ptr, out_ptr, n, margin, inv_n,
                           BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x1_ptr + offs, mask=mask, other=0.0)
    b = tl.load(x2_ptr + offs, mask=mask, other=0.0)
    t = tl.load(y_ptr + offs, mask=mask, other=0.0)
    l = tl.maximum(-t * (a - b) + margin, 0.0)
    l = tl.where(mask, l, 0.0)
    partial = tl.sum(l, axis=0)
    tl.atomic_add(out_ptr, partial * inv_n)


def margin_ranking_loss(x1, x2, y, margin=MARGIN):
    n = x1.numel()
    out = torch.zeros((), dtype=torch.float32, device=x1.device)
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    _margin_ranking_kernel[grid](x1, x2, y, out, n, margin, 1.0 / n,
                                 BLOCK=BLOCK, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x1, x2, y):
        return margin_ranking_loss(x1, x2, y)


def get_inputs():
    x1 = torch.randn(L, dtype=torch.float32)
    x2 = torch.randn(L, dtype=torch.float32)
    y = torch.randint(0, 2, (L,)).to(torch.float32) * 2 - 1
    return [x1, x2, y]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"L": 4096},
    {"L": 1000},
    {"L": 100003},
]
