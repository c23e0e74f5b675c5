"""Softmax over the last dimension of (M, N) fp32 scores where a boolean mask (M, N) removes entries
(masked_fill with -inf, then softmax); every row keeps at least one entry.

Known problems:
- lines 29,40: the bool mask loaded twice (once per pass), one byte per element each time
- lines 26-36: two passes over the row (online max and normalizer, then the output)
- line 42: division by the normalizer per element
- line 56: BLOCK_SIZE=512 for rows of 8192
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
TEST_SHAPES = [{"M": 5, "N": 300}, {"M": 8, "N": 1024}]


@triton.jit
def masked_softmax_kernel(x_ptr, m_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_max = -float("inf")
    denom = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        inb = cols < n_cols
        keep = tl.load(m_ptr + row * stride_row + cols, mask=inb, other=0) != 0
        x = tl.load(x_ptr + row * stride_row + cols, mask=inb, other=0.0)
        x = tl.where(keep, x, -float("inf"))
        new_max = tl.maximum(row_max, tl.max(x, axis=0))
        scale = tl.where(new_max == -float("inf"), 1.0, tl.exp(row_max - new_max))
        e = tl.where(keep, tl.exp(x - new_max), 0.0)
        denom = denom * scale + tl.sum(e, axis=0)
        row_max = new_max
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        inb = cols < n_cols
        keep = tl.load(m_ptr + row * stride_row + cols, mask=inb, other=0) != 0
        x = tl.load(x_ptr + row * stride_row + cols, mask=inb, other=0.0)
        y = tl.where(keep, tl.exp(x - row_max) / denom, 0.0)
        tl.store(out_ptr + row * stride_row + cols, y, mask=inb)


class Model(nn.Module):
    def forward(self, x, mask):
        return torch.softmax(x.masked_fill(~mask, float("-inf")), dim=1)


class ModelNew(nn.Module):
    def forward(self, x, mask):
        out = torch.empty_like(x)
        m, n = x.shape
        mask_u8 = mask.to(torch.uint8)
        masked_softmax_kernel[(m,)](x, mask_u8, out, n, x.stride(0), BLOCK_SIZE=512)
        return out


def get_inputs():
    mask = torch.rand(M, N) > 0.3
    mask[:, 0] = True
    return [torch.randn(M, N), mask]


def get_init_inputs():
    return []
