"""Column sum: out[j] = sum_i x[i, j], x fp16 (M, N) -> out fp16 (N,), accumulated in fp32 and rounded once at the end.

Each Triton program owns BLOCK_N adjacent columns and walks down all M rows
in [BLOCK_M, BLOCK_N] tiles (rows contiguous in memory, so each tile row is a
coalesced load). Tiles are upcast to fp32 and added into an fp32
[BLOCK_M, BLOCK_N] accumulator; at the end the accumulator is reduced over
its row axis and the BLOCK_N column sums are stored as fp16.

Known problems:
- line 45: the grid is cdiv(N, BLOCK_N) = 32 programs for N=4096, a quarter of the H200's 132 SMs, and each program streams all 32768 rows serially; this reads 256 MB with maybe 10-20% of the achievable bandwidth. The M dimension should also be split across programs (fp32 partials + a second small reduction, or atomics).
- line 43: each program is 4 warps on a 32x128 fp16 tile (8 KB per iteration), so even the few active SMs have little memory in flight.
- line 28: the fp32 accumulator is a full [BLOCK_M, BLOCK_N] tile (32 registers per thread) only to delay the cross-row reduction to the end; fine, but it caps how large the tile can grow before spilling.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 32768
N = 4096


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, M, N, stride_x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & cmask[None, :]
        ptrs = x_ptr + rows[:, None] * stride_x + cols[None, :]
        x = tl.load(ptrs, mask=mask, other=0.0)
        acc += x.to(tl.float32)
    col_sum = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, col_sum.to(tl.float16), mask=cmask)


def column_sum(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_cols, dtype=torch.float16, device=x.device)
    BLOCK_M = 32
    BLOCK_N = 128
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    column_sum_kernel[grid](x, out, n_rows, n_cols, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return column_sum(x)


def get_inputs():
    return [torch.randn(M, N).to(torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 300},
    {"M": 129, "N": 71},
    {"M": 211, "N": 133},
]
