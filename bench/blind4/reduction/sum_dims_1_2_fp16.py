"""Sum over the two trailing dims: x.sum(dim=(1, 2)).

x is (BATCH, DIM1, DIM2) fp16; output is (BATCH,) fp16, accumulated in fp32.

Known problems:
- L53: only BATCH = 64 programs for 64 MB of data: fewer programs than SMs (132), each streaming 1 MB
  serially (L36-40), so most of the GPU idles; the row should be split over many programs (two-stage
  reduction or atomics).
- L52: BLOCK = 1024 with default num_warps, one 2 KB load in flight per loop step; little memory-level
  parallelism per program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 64
DIM1 = 512
DIM2 = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=(1, 2))


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, L, stride_row, BLOCK: tl.constexpr):
    # one program per batch element; (DIM1, DIM2) is flattened to one contiguous row of length L
    row = tl.program_id(0)
    row_ptr = x_ptr + row.to(tl.int64) * stride_row
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, L, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < L
        v = tl.load(row_ptr + offs, mask=mask, other=0.0)
        acc += v.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


def sum_dims_1_2(x):
    assert x.dim() == 3
    x = x.contiguous()
    b = x.shape[0]
    L = x.shape[1] * x.shape[2]
    x2 = x.view(b, L)
    out = torch.empty((b,), dtype=x.dtype, device=x.device)
    BLOCK = 1024
    sum_rows_kernel[(b,)](x2, out, L, x2.stride(0), BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return sum_dims_1_2(x)


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "DIM1": 37, "DIM2": 129},
    {"BATCH": 4, "DIM1": 64, "DIM2": 128},
    {"BATCH": 5, "DIM1": 7, "DIM2": 300},
]
