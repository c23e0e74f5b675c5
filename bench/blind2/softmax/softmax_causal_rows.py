"""Causal row softmax: y[b, i, :] = softmax(where(j <= i, x[b, i, j], -inf)) over j, x fp32 (B, S, S) -> y fp32 (B, S, S), masked entries become 0.

One Triton program handles one row (b, i) of the score tensor. It loads the
full row into a power-of-two block (BLOCK_S = next_power_of_2(S)), replaces
the entries above the diagonal (j > i) by -inf, takes the row max, the
exponentials and their sum, and stores the normalized row (the masked part
comes out as exactly 0).

Known problems:
- line 31: the load is masked only by j < S, not by j <= i, so the upper triangle is fetched from HBM and then thrown away: about half of the read traffic (64 MB of 128 MB) is wasted.
- line 34: the masked part of each row (which is known to be 0) still goes through exp and division; it could be written as plain zeros, or the row could be processed only up to the diagonal.
- line 36: one division per element instead of a multiply by the reciprocal of the row sum.
- line 46: default num_warps=4 for a 1024-wide row, with no per-row work balancing: rows near the top of each matrix have almost no valid entries but cost the same as the last row.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
SEQ = 1024


@triton.jit
def causal_softmax_kernel(x_ptr, y_ptr, S, BLOCK_S: tl.constexpr):
    row = tl.program_id(0)  # flat row index over B*S
    i = row % S             # query position inside the (S, S) matrix
    cols = tl.arange(0, BLOCK_S)
    in_row = cols < S
    keep = cols <= i
    x = tl.load(x_ptr + row * S + cols, mask=in_row, other=float("-inf"))
    x = tl.where(keep, x, float("-inf"))
    row_max = tl.max(x, axis=0)
    e = tl.exp(x - row_max)
    denom = tl.sum(e, axis=0)
    y = e / denom
    tl.store(y_ptr + row * S + cols, y, mask=in_row)


def causal_softmax(x):
    x = x.contiguous()
    b, s, s2 = x.shape
    y = torch.empty_like(x)
    BLOCK_S = triton.next_power_of_2(s)
    grid = (b * s,)
    causal_softmax_kernel[grid](x, y, s, BLOCK_S=BLOCK_S)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        s = x.shape[-1]
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        return torch.softmax(x.masked_fill(~causal, float("-inf")), dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return causal_softmax(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, SEQ, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "SEQ": 37},
    {"BATCH": 2, "SEQ": 129},
    {"BATCH": 5, "SEQ": 71},
]
