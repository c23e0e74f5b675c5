"""Row softmax: torch.softmax(x, dim=-1) of a wide (M, N) fp32 matrix.

Known problems:
- lines 35-38, 42-45, 48-52: three passes per row (max, sum of exp, normalize) load each 32 KB row three times and compute exp twice; an online max/sum pass, or the whole 8192-wide row in registers with more warps, would read it once
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 8192

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 3, "N": 2500},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    # pass 1: row max
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf"))
        m = tl.maximum(m, v)
    row_max = tl.max(m, axis=0)
    # pass 2: sum of exponentials
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf"))
        s += tl.exp(v - row_max)
    denom = tl.sum(s, axis=0)
    # pass 3: normalize and store
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_row + offs, mask=mask, other=float("-inf"))
        tl.store(y_row + offs, tl.exp(v - row_max) / denom, mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    BLOCK = 1024
    softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
