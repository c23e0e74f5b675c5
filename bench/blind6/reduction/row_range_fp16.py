"""Per-row range (max - min), fp16.

x (M, N) fp16 -> x.amax(dim=1) - x.amin(dim=1), shape (M,), fp16.
Benchmark shape: M=16384, N=4096.

Known problems:
- lines 35-40: each program walks its 4096-element row in 4 dependent 1024-element chunks, with masking and two tl.where selects on every iteration even though N is a multiple of BLOCK; a single whole-row load (BLOCK=next_pow2(N)) would put more bytes in flight per program.
- line 38: values are upcast to fp32 for max/min, which is exact in fp16 anyway, doubling register use.
- lines 49-50: BLOCK=1024 with default num_warps=4 and no autotuning; one row per program, 16384 tiny programs.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amax(dim=1) - x.amin(dim=1)


@triton.jit
def row_range_kernel(x_ptr, y_ptr, N, stride_xm, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    row_ptr = x_ptr + row * stride_xm
    vmax = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    vmin = tl.full((BLOCK,), float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + offs
        mask = idx < N
        xv = tl.load(row_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        vmax = tl.maximum(vmax, tl.where(mask, xv, float("-inf")))
        vmin = tl.minimum(vmin, tl.where(mask, xv, float("inf")))
    rng = tl.max(vmax, axis=0) - tl.min(vmin, axis=0)
    tl.store(y_ptr + row, rng.to(y_ptr.dtype.element_ty))


def row_range(x):
    assert x.stride(1) == 1
    Mr, Nc = x.shape
    y = torch.empty((Mr,), device=x.device, dtype=x.dtype)
    BLOCK = 1024
    row_range_kernel[(Mr,)](x, y, Nc, x.stride(0), BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_range(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 2048},
    {"M": 37, "N": 1500},
    {"M": 5, "N": 100},
]
