"""out = x.clone(); out.index_copy_(0, idx, src), i.e. out[idx[k], :] = src[k, :]; x (M, D) fp32, idx int64 (K,) unique, src (K, D) fp32.

The wrapper first clones x (a plain torch copy), then launches a 2-D grid: axis 0 walks the K source rows, axis 1
walks BLOCK_D-wide column slices. Each program loads its destination row index and copies one slice of src row k
into out row idx[k]. Indices are unique, so there are no write conflicts.

Known problems:
- line 36: the clone is a separate full pass, and the K destination rows are written twice (once by the clone, once by the kernel); a fused kernel driven by an inverse index map could copy x and src in one pass.
- lines 37-38: each program moves only 256 fp32 (1 KB; 2 elements = 8 bytes per thread with 4 warps), so there are many tiny programs with narrow accesses; a whole row per program would vectorize to 16-byte accesses.
- line 28: the destination index is re-loaded by every D-block program of the row (minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_ROWS = 32768
DIM = 1024
NUM_INDICES = 8192


@triton.jit
def index_copy_rows_kernel(src_ptr, idx_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    pid_k = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(idx_ptr + pid_k)
    vals = tl.load(src_ptr + pid_k * D + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * D + cols, vals, mask=mask)


def index_copy_rows(x, idx, src):
    D = x.shape[1]
    K = idx.shape[0]
    out = x.clone()
    BLOCK_D = 256
    grid = (K, triton.cdiv(D, BLOCK_D))
    index_copy_rows_kernel[grid](src, idx, out, D, BLOCK_D=BLOCK_D)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, src):
        out = x.clone()
        out.index_copy_(0, idx, src)
        return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, src):
        return index_copy_rows(x, idx, src)


def get_inputs():
    x = torch.randn(NUM_ROWS, DIM)
    idx = torch.randperm(NUM_ROWS)[:NUM_INDICES]
    src = torch.randn(NUM_INDICES, DIM)
    return [x, idx, src]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"NUM_ROWS": 129, "DIM": 71, "NUM_INDICES": 37},
    {"NUM_ROWS": 257, "DIM": 300, "NUM_INDICES": 129},
    {"NUM_ROWS": 97, "DIM": 517, "NUM_INDICES": 53},
]
