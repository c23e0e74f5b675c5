"""Softmax over the last dim of 4-D attention scores, bf16.

Computes out = torch.softmax(x, dim=-1) for attention scores x of shape (B, H, S, S), bf16 in / bf16 out,
with the max / exp / sum reduction done in fp32. The tensor is viewed as (B*H*S, S) rows.
Benchmark shape: B=8, H=16, S=1024.

Known problems:
- L49-L51: one program per row with the whole 1024-wide row in a single block and the default num_warps=4; 8 bf16 elements per thread is fine for registers but no tuning of num_warps / rows per program was done.
- L35-L38: the masked-out lanes are loaded as -inf and then explicitly zeroed again with tl.where after the exp, an extra select per element (exp(-inf) is already 0).
- L40-L40: the output is written as a division per element (num / den) instead of a single reciprocal then multiply.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 8
H = 16
S = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def softmax_lastdim_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    num = tl.where(mask, num, 0.0)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_lastdim(x):
    orig_shape = x.shape
    x2 = x.contiguous().view(-1, orig_shape[-1])
    n_rows, n_cols = x2.shape
    out = torch.empty_like(x2)
    BLOCK_N = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    softmax_lastdim_kernel[grid](x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out.view(orig_shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_lastdim(x)


def get_inputs():
    x = torch.randn(B, H, S, S, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "H": 2, "S": 64},
    {"B": 1, "H": 3, "S": 37},
    {"B": 2, "H": 1, "S": 129},
]
