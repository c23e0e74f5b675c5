"""Scaled softmax over the last dimension of attention-score-shaped fp32 x (B, H, Q, K).

out = softmax(x * 0.125, dim=-1), i.e. per row over K: exp(s - max s) / sum exp(s - max s) with s = 0.125 * x.

Known problems:
_scaled_softmax_kernel: one program per row (8*16*512 = 65536 programs of 512 elements = 2 KB each); no multi-row blocking per program, so per-program overhead and short reductions dominate.
ModelNew.forward: num_warps left at the default (4) for a 512-wide row (4 elements per thread), no autotuning of num_warps/rows-per-program.
_scaled_softmax_kernel: scale multiply and tl.exp done separately (no folding of scale * log2(e) into an exp2), and a full division by the sum per element instead of multiplying by a reciprocal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 8
HEADS = 16
Q_LEN = 512
K_LEN = 512
SCALE = 0.125


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.softmax(x * self.scale, dim=-1)


@triton.jit
def _scaled_softmax_kernel(x_ptr, out_ptr, n_cols, scale, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    s = x * scale
    m = tl.max(s, axis=0)
    e = tl.exp(s - m)
    e = tl.where(mask, e, 0.0)
    denom = tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + cols, e / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        n_rows = x.numel() // n_cols
        out = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n_cols)
        _scaled_softmax_kernel[(n_rows,)](x, out, n_cols, self.scale, BLOCK_N=BLOCK_N)
        return out


def get_inputs():
    return [torch.randn(BATCH, HEADS, Q_LEN, K_LEN, dtype=torch.float32) * 4.0]


def get_init_inputs():
    return [SCALE]


TEST_SHAPES = [
    {"BATCH": 1, "HEADS": 2, "Q_LEN": 8, "K_LEN": 64},
    {"BATCH": 2, "HEADS": 3, "Q_LEN": 5, "K_LEN": 77},
    {"BATCH": 1, "HEADS": 1, "Q_LEN": 3, "K_LEN": 512},
]
