"""out[k, :] = x[idx[k], :]  (x.index_select(0, idx)); x (M, D) fp16, idx int64 (K,), out (K, D) fp16.

A 2-D grid: axis 0 walks the K selected rows, axis 1 walks BLOCK_D-wide column slices of the row. Each program
loads its row index, copies one BLOCK_D slice of the source row into the output row.

Known problems:
- lines 36-37: each program copies only 256 fp16 (512 bytes) - 262144 tiny programs, so per-program overhead and the idx -> data load latency dominate; a whole row (or several rows) per program would be far better.
- line 36: with the default num_warps=4, 256 fp16 elements give 2 elements (4 bytes) per thread, so loads/stores are 32-bit instead of 128-bit vectors.
- line 27: the row index is re-loaded by each of the D / BLOCK_D programs of the same output row, and the data load cannot start until this scalar load returns.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_ROWS = 65536
DIM = 1024
NUM_INDICES = 65536


@triton.jit
def index_select_rows_kernel(x_ptr, idx_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    pid_k = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(idx_ptr + pid_k)
    vals = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0)
    tl.store(out_ptr + pid_k * D + cols, vals, mask=mask)


def index_select_rows(x, idx):
    D = x.shape[1]
    K = idx.shape[0]
    out = torch.empty((K, D), dtype=x.dtype, device=x.device)
    BLOCK_D = 256
    grid = (K, triton.cdiv(D, BLOCK_D))
    index_select_rows_kernel[grid](x, idx, out, D, BLOCK_D=BLOCK_D)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return x.index_select(0, idx)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return index_select_rows(x, idx)


def get_inputs():
    x = torch.randn(NUM_ROWS, DIM, dtype=torch.float16)
    idx = torch.randint(0, NUM_ROWS, (NUM_INDICES,), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"NUM_ROWS": 37, "DIM": 71, "NUM_INDICES": 129},
    {"NUM_ROWS": 129, "DIM": 300, "NUM_INDICES": 53},
    {"NUM_ROWS": 71, "DIM": 517, "NUM_INDICES": 97},
]
