"""Exclusive prefix sum along dim 1: out[:, 0] = 0, out[:, j] = sum(x[:, :j]) for x (N_ROWS, N_COLS) fp16,
accumulated in fp32, output fp16.

Known problems:
- lines 38-45: one program walks its row serially in 1024-element chunks chained through the carry; each chunk's tl.cumsum is a cross-warp scan with barriers, so the kernel is latency-bound rather than bandwidth-bound.
- line 45: extra tl.sum reduction per chunk to update the carry, although the chunk total is already the last element of the inclusive scan.
- lines 53-55: BLOCK=1024 and default num_warps fixed, one row per program; not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xf = x.float()
        inc = torch.cumsum(xf, dim=1)
        exc = torch.zeros_like(inc)
        exc[:, 1:] = inc[:, :-1]
        return exc.to(torch.float16)


@triton.jit
def exclusive_cumsum_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # One program per row; walk the row in BLOCK chunks, scan each chunk and carry the running total.
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    offs = tl.arange(0, BLOCK)
    carry = tl.zeros((), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        inc = tl.cumsum(v, axis=0)
        exc = inc - v + carry
        tl.store(out_row + cols, exc.to(tl.float16), mask=mask)
        carry += tl.sum(v, axis=0)


def exclusive_cumsum_rows(x):
    assert x.dim() == 2
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.float16)
    BLOCK = 1024
    grid = (n_rows,)
    exclusive_cumsum_kernel[grid](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return exclusive_cumsum_rows(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS).to(torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 8, "N_COLS": 2048},
    {"N_ROWS": 37, "N_COLS": 1500},
    {"N_ROWS": 5, "N_COLS": 129},
]
