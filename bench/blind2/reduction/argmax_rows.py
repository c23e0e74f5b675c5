"""Row argmax: out[i] = argmax_j x[i, j] (first index of the maximum), x fp32 (M, N) -> out int64 (M,).

One Triton program handles one row and loops over it in BLOCK_N-wide
chunks. Every lane keeps its own best value and the column index where it
was seen (a strict '>' keeps the earliest index per lane). After the loop
the row maximum is reduced over lanes, and the smallest index among the
lanes holding that maximum is selected, which reproduces torch's
first-occurrence tie-breaking. NaNs are not handled specially.

Known problems:
- line 35: the per-lane index accumulator is int64, so every loop iteration does 64-bit selects/adds and keeps twice the registers; int32 indices with a cast at the store would suffice.
- lines 36-38: two reductions after the loop (max, then a masked min over indices) where a single tl.argmax / combined (value, index) reduction would do.
- line 45: BLOCK_N=1024 with default num_warps=4 and a serial loop: only 8 floats per thread in flight per iteration; a whole-row block (4096) or more warps would raise memory-level parallelism.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def argmax_kernel(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    best_val = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros([BLOCK_N], dtype=tl.int64)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        take = x > best_val
        best_val = tl.where(take, x, best_val)
        best_idx = tl.where(take, cols.to(tl.int64), best_idx)
    row_max = tl.max(best_val, axis=0)
    cand = tl.where(best_val == row_max, best_idx, N)
    tl.store(out_ptr + row, tl.min(cand, axis=0))


def argmax_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, dtype=torch.int64, device=x.device)
    BLOCK_N = 1024
    grid = (n_rows,)
    argmax_kernel[grid](x, out, n_cols, x.stride(0), BLOCK_N=BLOCK_N)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return argmax_rows(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 1500},
    {"M": 71, "N": 129},
    {"M": 29, "N": 2111},
]
