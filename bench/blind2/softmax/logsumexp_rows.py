"""Row logsumexp: out[i] = log(sum_j exp(x[i, j])) computed stably as m_i + log(sum_j exp(x[i, j] - m_i)), x fp32 (M, N) -> out fp32 (M,).

One Triton program handles one row. It loops over the row in BLOCK_N-wide
chunks twice: the first loop finds the row max, the second accumulates
exp(x - max) per lane, then the lanes are summed and max + log(sum) is
written for the row.

Known problems:
- lines 37-40: the sum loop re-reads the row after the max loop, so it is read twice; an online logsumexp (running max with rescaling of the running sum) or a whole-row load (4096 floats fit in one program) would read it once.
- line 49: BLOCK_N=1024 with default num_warps=4: every iteration has only 8 floats per thread in flight and the loop is serial, limiting memory-level parallelism per SM.
- line 50: one program per row with a single scalar store is fine for M=16384, but for few long rows the GPU would be under-filled since a row is never split across programs.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x

    # pass 1: row max
    m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)

    # pass 2: sum of exp(x - max)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        acc += tl.exp(x - row_max)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, row_max + tl.log(total))


def logsumexp_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    BLOCK_N = 1024
    grid = (n_rows,)
    logsumexp_kernel[grid](x, out, n_cols, x.stride(0), BLOCK_N=BLOCK_N)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return logsumexp_rows(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 1500},
    {"M": 71, "N": 129},
    {"M": 23, "N": 2053},
]
