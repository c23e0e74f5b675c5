"""Row softmax over the last dim of a narrow fp16 matrix.

Computes out = torch.softmax(x, dim=-1) for x of shape (N_ROWS, N_COLS), fp16 in / fp16 out,
with the max / exp / sum reduction done in fp32.
Benchmark shape: N_ROWS=262144, N_COLS=96.

Known problems:
- L31-L48: one program per row (kernel L31-L40, grid L48): each program only touches 96 fp16 values (192 bytes), so 262144 tiny programs are launched and per-program overhead dominates; several rows per program would amortize it.
- L47-L47: BLOCK_N is next_power_of_2(96)=128, so a quarter of every load/store lane is masked off and wasted.
- L49-L49: default num_warps=4 (128 threads) for a 128-wide block gives one element per thread; loads are not vectorized and most of the warp time is reduction shuffles.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 262144
N_COLS = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    num = tl.where(mask, num, 0.0)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    softmax_rows_kernel[grid](x, out, n_cols, x.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_rows(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 64, "N_COLS": 96},
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 5, "N_COLS": 7},
]
