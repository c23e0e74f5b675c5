"""Reverse (suffix) cumulative sum along dim 1 of a 3-D fp16 tensor.

x: (B, L, D) fp16; out[b, i, d] = sum_{j >= i} x[b, j, d], accumulated in fp32, stored as fp16.
Each program owns one batch b and a block of BLOCK_D columns and walks the L dimension from the
end towards the start in chunks of BLOCK_L rows: a chunk is loaded in reversed row order, scanned
with tl.cumsum along the rows, offset by the running fp32 carry of all later rows, and stored.

Known problems:
- L55-56: grid = B * cdiv(D, 64) = 256 programs, each walking all L=2048 rows sequentially (64 dependent chunk iterations); the scan dimension is never split across programs (no chunked two-pass or decoupled look-back), so the kernel is latency-bound with ~2 programs per SM.
- L39-48: each chunk's load -> scan -> store -> carry update is a serial chain; overlap of the next chunk's load relies on the compiler's default software pipelining, nothing explicit.
- L46, L48: tl.cumsum along axis 0 of a [32, 64] tile scans across threads/warps (shared-memory round trips per chunk), and tl.sum re-reduces the same chunk to get the carry instead of taking the last scanned row.
- L55: BLOCK_L=32, BLOCK_D=64 fixed (128-byte fp16 row segments per program), default num_warps, no autotune.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 64
L = 2048
D = 256

TEST_SHAPES = [
    {"B": 3, "L": 77, "D": 45},
    {"B": 2, "L": 64, "D": 64},
    {"B": 1, "L": 5, "D": 130},
]


@triton.jit
def reverse_cumsum_dim1_kernel(x_ptr, y_ptr, L, D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < D
    base = b * L * D
    carry = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for start in range(0, L, BLOCK_L):
        # rows L-1-start, L-2-start, ... (reversed order, so a forward scan gives the suffix sum)
        rows = L - 1 - (start + tl.arange(0, BLOCK_L))
        r_mask = rows >= 0
        offs = base + rows[:, None] * D + offs_d[None, :]
        mask = r_mask[:, None] & d_mask[None, :]
        v = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        cs = tl.cumsum(v, axis=0) + carry[None, :]
        tl.store(y_ptr + offs, cs.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(v, axis=0)


def reverse_cumsum_dim1(x):
    x = x.contiguous()
    bsz, l, d = x.shape
    y = torch.empty_like(x)
    BLOCK_L, BLOCK_D = 32, 64
    grid = (bsz, triton.cdiv(d, BLOCK_D))
    reverse_cumsum_dim1_kernel[grid](x, y, l, d, BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[1]).float(), dim=1), dims=[1]).to(x.dtype)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return reverse_cumsum_dim1(x)


def get_inputs():
    return [torch.randn(B, L, D, dtype=torch.float16)]


def get_init_inputs():
    return []
