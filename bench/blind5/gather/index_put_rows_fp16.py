"""Row scatter (index_put) into a copy, fp16.

Computes out = x.clone(); out[idx] = values for x of shape (N_ROWS, D) fp16, idx (N_IDX,) int64 distinct row
indices (a random permutation prefix) and values (N_IDX, D) fp16; output (N_ROWS, D) fp16.
Benchmark shape: N_ROWS=65536, D=512, N_IDX=8192.

Known problems:
- L45-L50: the clone is a separate full pass over x (read + write 64 MB) and the scatter a second launch that then overwrites the N_IDX rows again; a fused kernel (or skipping the copy of rows that get overwritten) would save the redundant writes and one launch.
- L33-L38: one program per index row moves only 512 fp16 values (1 KB) each, after a dependent scalar idx load; many tiny programs with default num_warps=4.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 65536
D = 512
N_IDX = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, values):
        out = x.clone()
        out[idx] = values
        return out


@triton.jit
def scatter_rows_kernel(out_ptr, idx_ptr, val_ptr, d, BLOCK_D: tl.constexpr):
    i = tl.program_id(0)
    row = tl.load(idx_ptr + i).to(tl.int64)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < d
    v = tl.load(val_ptr + i.to(tl.int64) * d + offs, mask=mask)
    tl.store(out_ptr + row * d + offs, v, mask=mask)


def index_put_rows(x, idx, values):
    x = x.contiguous()
    idx = idx.contiguous()
    values = values.contiguous()
    out = x.clone()
    n_idx = idx.shape[0]
    d = x.shape[1]
    BLOCK_D = triton.next_power_of_2(d)
    grid = (n_idx,)
    scatter_rows_kernel[grid](out, idx, values, d, BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, values):
        return index_put_rows(x, idx, values)


def get_inputs():
    x = torch.randn(N_ROWS, D, dtype=torch.float16)
    idx = torch.randperm(N_ROWS, dtype=torch.int64)[:N_IDX]
    values = torch.randn(N_IDX, D, dtype=torch.float16)
    return [x, idx, values]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 64, "D": 64, "N_IDX": 16},
    {"N_ROWS": 129, "D": 37, "N_IDX": 37},
    {"N_ROWS": 10, "D": 129, "N_IDX": 10},
]
