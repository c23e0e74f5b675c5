"""Softmax over dim 0: y[i, j] = exp(x[i, j] - max_i x[:, j]) / sum_i exp(x[i, j] - max_i x[:, j]), x fp32 (M, N) -> y fp32 (M, N).

Each Triton program owns BLOCK_N adjacent columns (so every row access is a
contiguous, coalesced load of BLOCK_N floats) and walks down all M rows
three times: once for the column max, once for the sum of exponentials, and
once to write exp(x - max) / sum.

Known problems:
- line 52: the grid is cdiv(N, BLOCK_N) = 64 programs for N=8192, fewer than the 132 SMs of an H200, each with 4 warps; most of the GPU idles. Splitting M across programs (split reduction) or using smaller column blocks would be needed to fill the machine.
- lines 31-44: each loop iteration loads just one row segment of 128 floats (512 B) per program and the loops are serial over M, so very little memory is in flight; a 2-D [BLOCK_M, BLOCK_N] tile per iteration would give far more memory-level parallelism.
- lines 37-44: the sum and normalize loops re-read the input: three full passes over the 128 MB input (max, sum, write) that does not fit in L2: 3 reads + 1 write of HBM traffic; an online max/sum would merge the first two passes.
- line 44: exp(x - m) / s does a division per element; multiplying by a precomputed 1/s is cheaper.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 8192


@triton.jit
def softmax_dim0_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N

    # pass 1: column max
    m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    for r in range(0, M):
        x = tl.load(x_ptr + r * stride_x + cols, mask=cmask, other=0.0)
        m = tl.maximum(m, x)

    # pass 2: column sum of exp
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(0, M):
        x = tl.load(x_ptr + r * stride_x + cols, mask=cmask, other=0.0)
        s += tl.exp(x - m)

    # pass 3: normalize
    for r in range(0, M):
        x = tl.load(x_ptr + r * stride_x + cols, mask=cmask, other=0.0)
        tl.store(y_ptr + r * stride_y + cols, tl.exp(x - m) / s, mask=cmask)


def softmax_dim0(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = 128
    grid = (triton.cdiv(n_cols, BLOCK_N),)
    softmax_dim0_kernel[grid](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK_N=BLOCK_N)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_dim0(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 300},
    {"M": 129, "N": 71},
    {"M": 53, "N": 197},
]
