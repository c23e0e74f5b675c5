"""Row-wise L1 norm (bf16).

out = x.abs().sum(dim=-1) for x (N_ROWS, N_COLS) bf16, accumulated in fp32 and
written as bf16 of shape (N_ROWS,). Benchmark shape: 32768 x 1024.

Known problems:
- L45-L46: one row (2 KB) per program with a fixed BLOCK_N=1024 and num_warps=4, no autotuning and no multi-row programs; each program has very little work to hide memory latency.
- L32-L34: the column loop re-checks the column mask every iteration even when N_COLS is a multiple of BLOCK_N.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 32768
N_COLS = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.abs().sum(dim=-1, dtype=torch.float32).to(x.dtype)


@triton.jit
def _row_l1_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = x_ptr + row.to(tl.int64) * stride_row
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        v = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += tl.abs(v)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


def row_l1_norm(x):
    assert x.dim() == 2
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows,), device=x.device, dtype=x.dtype)
    BLOCK_N = 1024
    _row_l1_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK_N=BLOCK_N, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_l1_norm(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 64, "N_COLS": 1024},
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 129, "N_COLS": 2500},
]
