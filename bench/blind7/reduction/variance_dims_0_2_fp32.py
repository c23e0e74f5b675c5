"""Unbiased variance over the outer and inner axes of a 3-D tensor.

Computes torch.var(x, dim=(0, 2)) (unbiased, divisor A*C - 1) for x of shape (A, B, C)
float32; output (B,) float32.
Benchmark shape: A=64, B=256, C=1024 (~67 MB in, 1 KB out).

Known problems:
- One program per output element (B=256 programs), each reducing A*C = 65536 values
  serially: too few programs to saturate a large GPU and no split of the reduction
  across programs.
- Two passes (mean, then sum of squared deviations), so the input is read twice.
- BLOCK_C=1024 / num_warps=4 are fixed guesses, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 64
B = 256
C = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.var(x, dim=(0, 2))


@triton.jit
def _var_dims02_kernel(x_ptr, y_ptr, n_a, n_b, n_c, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    offs0 = tl.arange(0, BLOCK_C)
    row_stride = n_b * n_c
    b_ptr = x_ptr + b.to(tl.int64) * n_c
    count = n_a * n_c
    # pass 1: mean
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    a_ptr = b_ptr
    for a in range(0, n_a):
        for c0 in range(0, n_c, BLOCK_C):
            cols = c0 + offs0
            m = cols < n_c
            acc += tl.load(a_ptr + cols, mask=m, other=0.0)
        a_ptr += row_stride
    mean = tl.sum(acc, axis=0) / count
    # pass 2: sum of squared deviations
    acc2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    a_ptr = b_ptr
    for a in range(0, n_a):
        for c0 in range(0, n_c, BLOCK_C):
            cols = c0 + offs0
            m = cols < n_c
            x = tl.load(a_ptr + cols, mask=m, other=0.0)
            d = tl.where(m, x - mean, 0.0)
            acc2 += d * d
        a_ptr += row_stride
    var = tl.sum(acc2, axis=0) / (count - 1)
    tl.store(y_ptr + b, var)


def var_dims02(x):
    x = x.contiguous()
    a, b, c = x.shape
    y = torch.empty((b,), dtype=x.dtype, device=x.device)
    BLOCK_C = min(1024, triton.next_power_of_2(c))
    _var_dims02_kernel[(b,)](x, y, a, b, c, BLOCK_C=BLOCK_C, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return var_dims02(x)


def get_inputs():
    x = torch.randn(A, B, C, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 3, "B": 37, "C": 100},
    {"A": 7, "B": 5, "C": 129},
    {"A": 2, "B": 16, "C": 1500},
]
