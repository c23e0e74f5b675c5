"""Sigmoid gate with broadcast residual, fp32.

a, b: (M, N) fp32; c: (N,) fp32 broadcast over rows.
y = sigmoid(a) * b + c, shape (M, N) fp32.

Known problems:
- line 27, 28: the broadcast column index is an integer modulo per element; the compiler cannot prove the c addresses are contiguous, so the c load is not vectorised (scalar 4-byte loads, even though they hit L1/L2).
- line 52: BLOCK=1024 with the default 4 warps gives only 8 elements per thread and 32768 programs; fine for bandwidth but more per-program overhead than needed.
- line 29: tl.sigmoid costs an exp plus a full-precision divide per element (cheap relative to memory here, but not free).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096


@triton.jit
def sigmoid_gate_residual_kernel(a_ptr, b_ptr, c_ptr, y_ptr, n_elements, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    col = offs % N
    c = tl.load(c_ptr + col, mask=mask, other=0.0)
    y = tl.sigmoid(a) * b + c
    tl.store(y_ptr + offs, y, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        return torch.sigmoid(a) * b + c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        a = a.contiguous()
        b = b.contiguous()
        c = c.contiguous()
        n_rows, n_cols = a.shape
        y = torch.empty_like(a)
        n_elements = a.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n_elements, BLOCK),)
        sigmoid_gate_residual_kernel[grid](a, b, c, y, n_elements, n_cols, BLOCK=BLOCK)
        return y


def get_inputs():
    a = torch.randn(M, N, dtype=torch.float32)
    b = torch.randn(M, N, dtype=torch.float32)
    c = torch.randn(N, dtype=torch.float32)
    return [a, b, c]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 203},
]
