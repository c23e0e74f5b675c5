"""Masked softmax with temperature: softmax((x / T).masked_fill(~mask, -inf), dim=-1) of an (M, N) fp32
matrix with a boolean mask of the same shape (no row is fully masked); T is a constructor float.

Known problems:
- none significant: x and the mask are read once and y written once, whole row in registers (lines 34-43); minor: line 39 divides by the temperature per element (kept to match the reference's rounding; the kernel is memory bound)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 2048
TEMPERATURE = 0.7

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 5, "N": 64},
]


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, x, mask):
        return torch.softmax((x / self.temperature).masked_fill(~mask, float("-inf")), dim=-1)


@triton.jit
def masked_softmax_kernel(x_ptr, m_ptr, y_ptr, n_cols, stride_x, stride_m, stride_y, temperature,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    in_row = offs < n_cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=in_row, other=0.0)
    keep = tl.load(m_ptr + row * stride_m + offs, mask=in_row, other=0) != 0
    z = tl.where(keep & in_row, x / temperature, float("-inf"))
    z = z - tl.max(z, axis=0)
    e = tl.exp(z)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + offs, y, mask=in_row)


def masked_softmax(x, mask, temperature):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    m2 = mask.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    BLOCK = triton.next_power_of_2(n_cols)  # whole row in one block
    masked_softmax_kernel[(x2.shape[0],)](x2, m2, y, n_cols, x2.stride(0), m2.stride(0), y.stride(0),
                                          temperature, BLOCK=BLOCK)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, x, mask):
        return masked_softmax(x, mask, self.temperature)


def get_inputs():
    x = torch.randn(M, N)
    mask = torch.rand(M, N) > 0.3
    mask[:, 0] = True  # no row is fully masked
    return [x, mask]


def get_init_inputs():
    return [TEMPERATURE]
