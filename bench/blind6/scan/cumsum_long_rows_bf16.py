"""Inclusive prefix sum along long rows: torch.cumsum(x, dim=1).

x: (ROWS, COLS) bf16 with ROWS = 256, COLS = 65536; inputs are randn * 0.01 so the
running sums stay in a range bf16 represents meaningfully. Output (ROWS, COLS) bf16;
the kernel accumulates in fp32.

Known problems:
- lines 38, 56: one program per row gives only 256 programs, each scanning 64 chunks serially; a row is not split across programs (chunked scan with carry propagation / look-back), so the kernel is latency-bound
- line 49: the carry is computed by a second full reduction tl.sum(x) per chunk instead of taking the last element of the scan
- lines 43-48: each iteration depends on the previous carry and does only 8 elements per thread (BLOCK=1024, 4 warps); little work in flight per program
- lines 55, 62: fixed BLOCK and num_warps, no autotuning
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 256
COLS = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


@triton.jit
def cumsum_rows_kernel(
    x_ptr, y_ptr,
    n_cols,
    stride_xr, stride_xc,
    stride_yr, stride_yc,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_xr
    y_row = y_ptr + row * stride_yr
    carry = tl.zeros((), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xc, mask=mask, other=0.0).to(tl.float32)
        s = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + cols * stride_yc, s.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (n_rows,)
    cumsum_rows_kernel[grid](
        x, y, n_cols,
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        BLOCK=BLOCK,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum_rows(x)


def get_inputs():
    return [(torch.randn(ROWS, COLS) * 0.01).to(torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 4, "COLS": 4096},
    {"ROWS": 3, "COLS": 3000},
    {"ROWS": 5, "COLS": 129},
]
