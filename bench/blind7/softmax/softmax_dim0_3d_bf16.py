"""Softmax over the leading axis of a 3-D tensor.

Computes torch.softmax(x, dim=0) for x of shape (A, B, C) bfloat16; output (A, B, C)
bfloat16. Math in fp32.
Benchmark shape: A=512, B=128, C=512 (~67 MB in, ~67 MB out).

Known problems:
- Two passes over the data (online max/sum pass, then a normalise-and-store pass),
  so the input is read twice from global memory.
- Each program owns a strip of BLOCK_C contiguous columns and walks the reduction
  axis serially with stride B*C; with A=512 that is a long dependent loop per
  program and there is no split of the reduction axis across programs.
- BLOCK_C=256 / num_warps=4 are fixed guesses, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 512
B = 128
C = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)


@triton.jit
def _softmax_dim0_kernel(x_ptr, y_ptr, n_red, n_cols, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < n_cols
    m = tl.full([BLOCK_C], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_C], dtype=tl.float32)
    # pass 1: online max and sum of exp along the reduction axis
    ptrs = x_ptr + cols
    for i in range(0, n_red):
        x = tl.load(ptrs, mask=cmask, other=0.0).to(tl.float32)
        ptrs += n_cols
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    inv = 1.0 / s
    # pass 2: normalise and store
    in_ptrs = x_ptr + cols
    out_ptrs = y_ptr + cols
    for i in range(0, n_red):
        x = tl.load(in_ptrs, mask=cmask, other=0.0).to(tl.float32)
        y = tl.exp(x - m) * inv
        tl.store(out_ptrs, y.to(y_ptr.dtype.element_ty), mask=cmask)
        in_ptrs += n_cols
        out_ptrs += n_cols


def softmax_dim0(x):
    x = x.contiguous()
    n_red = x.shape[0]
    n_cols = x.numel() // n_red
    y = torch.empty_like(x)
    BLOCK_C = 256
    grid = (triton.cdiv(n_cols, BLOCK_C),)
    _softmax_dim0_kernel[grid](x, y, n_red, n_cols, BLOCK_C=BLOCK_C, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_dim0(x)


def get_inputs():
    x = torch.randn(A, B, C, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 37, "B": 13, "C": 100},
    {"A": 129, "B": 4, "C": 64},
    {"A": 1, "B": 7, "C": 33},
    {"A": 64, "B": 3, "C": 300},
]
