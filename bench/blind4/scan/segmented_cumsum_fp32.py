"""Segmented inclusive cumsum along dim 1, fp32.

x: (M, N) fp32, flags: (M, N) bool. Along each row the running sum restarts at every
flagged position (the flagged element starts the new segment, so out = x there):
out[r, j] = x[r, j] + (out[r, j-1] if j > 0 and not flags[r, j] else 0).

Known problems:
- lines 58, 67: one program per row walks its 4 chunks serially through a loop-carried carry, and the carry is extracted with a full-block where+sum reduction per chunk
- line 62: flags read as uint8 and widened to int32 so they can ride along in the scan, doubling the scan's register payload
- line 76: BLOCK_N = 1024 and default num_warps=4 chosen without tuning
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096
FLAG_PROB = 0.05

TEST_SHAPES = [
    {"M": 16, "N": 256},
    {"M": 37, "N": 129},
    {"M": 5, "N": 2500},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, flags):
        xd = x.double()
        cs = torch.cumsum(xd, dim=1)
        # running total just before each segment start, zero elsewhere
        base = torch.where(flags, cs - xd, torch.zeros_like(cs))
        idx = torch.arange(x.shape[1], device=x.device).expand_as(x)
        last_start = torch.cummax(torch.where(flags, idx, torch.zeros_like(idx)), dim=1).values
        return (cs - torch.gather(base, 1, last_start)).to(x.dtype)


@triton.jit
def seg_combine(v1, f1, v2, f2):
    v = tl.where(f2 != 0, v2, v1 + v2)
    f = f1 | f2
    return v, f


@triton.jit
def segmented_cumsum_kernel(
    x_ptr, f_ptr, y_ptr,
    N, stride_x, stride_f, stride_y,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    offs0 = tl.arange(0, BLOCK_N)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs = start + offs0
        mask = offs < N
        x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0)
        f = tl.load(f_ptr + row * stride_f + offs, mask=mask, other=0).to(tl.int32)
        v, seen = tl.associative_scan((x, f), 0, seg_combine)
        # elements before the first flag of this block continue the previous segment
        out = tl.where(seen != 0, v, v + carry)
        tl.store(y_ptr + row * stride_y + offs, out, mask=mask)
        carry = tl.sum(tl.where(offs0 == BLOCK_N - 1, out, 0.0), axis=0)


def segmented_cumsum(x, flags):
    x = x.contiguous()
    f8 = flags.contiguous().view(torch.uint8)
    m, n = x.shape
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    BLOCK_N = 1024
    segmented_cumsum_kernel[(m,)](
        x, f8, y,
        n, x.stride(0), f8.stride(0), y.stride(0),
        BLOCK_N=BLOCK_N,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, flags):
        return segmented_cumsum(x, flags)


def get_inputs():
    x = torch.randn(M, N)
    flags = torch.rand(M, N) < FLAG_PROB
    return [x, flags]


def get_init_inputs():
    return []
