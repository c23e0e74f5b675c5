"""out[i, j] = prod_{k <= j} x[i, k]  (torch.cumprod(x, dim=1)); x (M, N) fp32 with values near 1, out (M, N) fp32.

One program per row. The program walks the row in BLOCK_N-wide chunks: each chunk is loaded (padding with 1.0),
scanned with tl.associative_scan using multiplication, scaled by the running product of all previous chunks and
stored; the running product is then multiplied by the product of the chunk (a separate tl.reduce).

Known problems:
- line 35: redundant full product reduction per chunk (extra cross-warp shared-memory round trip and barrier); the chunk total is already the last element of the scan result p.
- lines 29-34: chunks are processed strictly one after another: the next chunk's load is not issued until the current scan and store are done (no prefetch / pipelining), and each associative_scan needs a cross-warp exchange, so every program is latency-bound on its serial chain.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 4096
COLS = 4096


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def cumprod_rows_kernel(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    carry = tl.full([], 1.0, dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=1.0)
        p = tl.associative_scan(x, 0, _mul)
        tl.store(out_ptr + row * N + cols, p * carry, mask=mask)
        carry = carry * tl.reduce(x, 0, _mul)


def cumprod_rows(x):
    M, N = x.shape
    out = torch.empty_like(x)
    BLOCK_N = 1024
    grid = (M,)
    cumprod_rows_kernel[grid](x, out, N, BLOCK_N=BLOCK_N)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumprod_rows(x)


def get_inputs():
    x = 1.0 + 0.01 * torch.randn(ROWS, COLS)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 37, "COLS": 71},
    {"ROWS": 5, "COLS": 2085},
    {"ROWS": 13, "COLS": 1537},
]
