"""Row-wise reverse (suffix) cumulative sum: out = x.flip(-1).cumsum(-1).flip(-1), fp32, x of shape (M, N).

out[i, j] = sum_{k >= j} x[i, k].

Known problems:
- lines 33-40, 48: one program per row walks its row serially (right to left) in BLOCK_N chunks with a carried sum; each chunk waits for its load, then a cross-warp scan and a cross-warp sum, so latency is hidden only by the several rows resident per SM
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.flip(-1).cumsum(-1).flip(-1)


@triton.jit
def reverse_cumsum_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    carry = tl.zeros((), dtype=tl.float32)
    num_blocks = tl.cdiv(N, BLOCK_N)
    # walk the blocks from the right end so the carry holds the sum of everything to the right
    for b in range(0, num_blocks):
        start = (num_blocks - 1 - b) * BLOCK_N
        offs = start + tl.arange(0, BLOCK_N)
        mask = offs < N
        vals = tl.load(x_row + offs, mask=mask, other=0.0)
        scanned = tl.cumsum(vals, axis=0, reverse=True) + carry
        tl.store(out_row + offs, scanned, mask=mask)
        carry += tl.sum(vals, axis=0)


def reverse_cumsum(x):
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    m, n = x2.shape
    out = torch.empty_like(x2)
    BLOCK_N = 1024
    reverse_cumsum_kernel[(m,)](x2, out, n, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return reverse_cumsum(x)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 8, "N": 2048},
    {"M": 37, "N": 1500},
    {"M": 5, "N": 129},
]
