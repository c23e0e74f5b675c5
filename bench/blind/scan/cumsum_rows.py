"""Row-wise inclusive prefix sum: out = torch.cumsum(x, dim=-1), fp32, x of shape (M, N).

Known problems:
- lines 29-35, 43: one program per row walks its row serially in BLOCK_N chunks with a carried sum; the loads are not pipelined across iterations (each chunk waits for its load, then a cross-warp scan and a cross-warp sum), so latency is hidden only by the several rows resident per SM
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1)


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        mask = offs < N
        vals = tl.load(x_row + offs, mask=mask, other=0.0)
        scanned = tl.cumsum(vals, axis=0) + carry
        tl.store(out_row + offs, scanned, mask=mask)
        carry += tl.sum(vals, axis=0)


def cumsum_rows(x):
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    m, n = x2.shape
    out = torch.empty_like(x2)
    BLOCK_N = 1024
    cumsum_rows_kernel[(m,)](x2, out, n, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum_rows(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 8, "N": 2048},
    {"M": 37, "N": 1500},
    {"M": 5, "N": 129},
]
