"""out[i, k] = x[i, idx[i, k]]  (torch.take_along_dim(x, idx, dim=1)); x (M, N) fp32, idx (M, K) int64, out (M, K) fp32.

A 2-D grid: axis 0 is the row, axis 1 a BLOCK_K-wide slice of the index row. Each program loads BLOCK_K indices
(contiguous), gathers the corresponding elements of row i of x, and stores them contiguously into the output.

Known problems:
- lines 35-36: BLOCK_K = 128 with 4 warps is one element per thread: a single 4-byte random gather in flight per thread and 32768 small programs; more elements per thread (larger BLOCK_K) would raise memory-level parallelism.
- line 27: the gather is uncoalesced (random 32-byte sectors within the row), and the same 16 KB row of x is gathered by K / BLOCK_K = 8 different programs that share no L1; one program per whole index row would get L1 reuse of the x row.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 4096
COLS = 4096
NUM_TAKE = 1024


@triton.jit
def take_along_dim1_kernel(x_ptr, idx_ptr, out_ptr, N, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = offs < K
    idx = tl.load(idx_ptr + row * K + offs, mask=mask, other=0)
    vals = tl.load(x_ptr + row * N + idx, mask=mask, other=0.0)
    tl.store(out_ptr + row * K + offs, vals, mask=mask)


def take_along_dim1(x, idx):
    M, N = x.shape
    K = idx.shape[1]
    out = torch.empty((M, K), dtype=x.dtype, device=x.device)
    BLOCK_K = 128
    grid = (M, triton.cdiv(K, BLOCK_K))
    take_along_dim1_kernel[grid](x, idx, out, N, K, BLOCK_K=BLOCK_K)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return torch.take_along_dim(x, idx, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return take_along_dim1(x, idx)


def get_inputs():
    x = torch.randn(ROWS, COLS)
    idx = torch.randint(0, COLS, (ROWS, NUM_TAKE), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 37, "COLS": 71, "NUM_TAKE": 129},
    {"ROWS": 53, "COLS": 300, "NUM_TAKE": 37},
    {"ROWS": 71, "COLS": 129, "NUM_TAKE": 257},
]
