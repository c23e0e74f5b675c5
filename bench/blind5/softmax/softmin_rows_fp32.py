"""Row softmin, fp32.

Computes out = softmin(x, dim=1) = softmax(-x, dim=1) (torch.nn.functional.softmin) for x of shape (N_ROWS, N_COLS), fp32.
Benchmark shape: N_ROWS=8192, N_COLS=8192.

Known problems:
- L47-L49: the whole 8192-wide fp32 row is held in one block (BLOCK_N = next_power_of_2(N_COLS)) with the default num_warps=4, i.e. 64 fp32 values per thread (plus the exp temporaries): heavy register pressure / spilling; more warps or a looped (online) reduction would be needed.
- L31-L33: the block size grows with N_COLS without bound, so very wide rows would not compile / fit at all; there is no column loop.
- L39-L48: one program per row (grid L48) gives only 8192 programs, and each does (L39) a per-element division instead of multiplying by 1/den.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return nn.functional.softmin(x, dim=1)


@triton.jit
def softmin_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("inf"))
    neg = -x
    neg_max = tl.max(neg, axis=0)
    num = tl.exp(neg - neg_max)
    num = tl.where(mask, num, 0.0)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * stride_out + cols, y, mask=mask)


def softmin_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    softmin_rows_kernel[grid](x, out, n_cols, x.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmin_rows(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 16, "N_COLS": 256},
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 3, "N_COLS": 1000},
]
