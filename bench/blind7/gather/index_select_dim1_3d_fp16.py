"""Index-select along the middle axis of a 3D fp16 tensor.

Computes torch.index_select(x, 1, idx).
  x:   (A, B, C) float16, contiguous
  idx: (K,)      int64, random indices in [0, B)
  out: (A, K, C) float16

Known problems:
- One program per output row (a, k) copying a single C-length strip (512 bytes for C=256);
  many tiny programs, each re-loading idx[k], so launch/scheduling overhead is high relative
  to the bytes moved.
- No bounds checking of idx (out-of-range indices read out of bounds instead of erroring).
- BLOCK_C=256 is fixed; no vectorisation hints or multiple rows per program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 16
B = 4096
C = 256
K = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return torch.index_select(x, 1, idx)


@triton.jit
def index_select_dim1_kernel(x_ptr, idx_ptr, out_ptr, B, C, K,
                             BLOCK_C: tl.constexpr):
    row = tl.program_id(0)          # flattened (a, k) of the output
    pid_c = tl.program_id(1)
    a = row // K
    k = row % K
    src_b = tl.load(idx_ptr + k)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = offs_c < C
    src = x_ptr + (a.to(tl.int64) * B + src_b) * C + offs_c
    v = tl.load(src, mask=mask)
    dst = out_ptr + row.to(tl.int64) * C + offs_c
    tl.store(dst, v, mask=mask)


def index_select_dim1(x, idx):
    x = x.contiguous()
    idx = idx.contiguous()
    a, b, c = x.shape
    k = idx.shape[0]
    out = torch.empty((a, k, c), device=x.device, dtype=x.dtype)
    BLOCK_C = 256
    grid = (a * k, triton.cdiv(c, BLOCK_C))
    index_select_dim1_kernel[grid](x, idx, out, b, c, k, BLOCK_C=BLOCK_C)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return index_select_dim1(x, idx)


def get_inputs():
    x = torch.randn(A, B, C, dtype=torch.float16)
    idx = torch.randint(0, B, (K,), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 2, "B": 37, "C": 100, "K": 50},
    {"A": 3, "B": 129, "C": 300, "K": 20},
    {"A": 1, "B": 5, "C": 7, "K": 9},
]
