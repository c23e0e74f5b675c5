"""Sum over the third axis of a 4D fp16 tensor.

Computes x.sum(dim=2) with fp32 accumulation and an fp16 result.
  x:   (A, B, C, D) float16, contiguous
  out: (A, B, D)    float16

Known problems:
- One program per (a, b) slice walks all of C serially with a fixed [BLOCK_C, BLOCK_D]
  tile; for small A*B the grid is too small to fill the GPU (no split of C across programs).
- Block sizes are fixed guesses (BLOCK_C=32, BLOCK_D=64), not tuned for the shape; if D is
  much larger than 64 each row of the tile only covers a short 128-byte strip.
- The full 2D fp32 accumulator is kept in registers and only reduced at the end, which costs
  registers/occupancy compared to reducing each tile as it goes.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 8
B = 64
C = 512
D = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=2, dtype=torch.float32).to(torch.float16)


@triton.jit
def sum_dim2_kernel(x_ptr, out_ptr, C, D,
                    BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)          # flattened (a, b)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    base = x_ptr + row.to(tl.int64) * C * D
    acc = tl.zeros([BLOCK_C, BLOCK_D], dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        offs_c = c0 + tl.arange(0, BLOCK_C)
        mask = (offs_c[:, None] < C) & mask_d[None, :]
        v = tl.load(base + offs_c[:, None] * D + offs_d[None, :], mask=mask, other=0.0)
        acc += v.to(tl.float32)
    s = tl.sum(acc, axis=0)
    tl.store(out_ptr + row.to(tl.int64) * D + offs_d, s.to(tl.float16), mask=mask_d)


def sum_dim2(x):
    x = x.contiguous()
    a, b, c, d = x.shape
    out = torch.empty((a, b, d), device=x.device, dtype=torch.float16)
    BLOCK_C = 32
    BLOCK_D = 64
    grid = (a * b, triton.cdiv(d, BLOCK_D))
    sum_dim2_kernel[grid](x, out, c, d, BLOCK_C=BLOCK_C, BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return sum_dim2(x)


def get_inputs():
    x = torch.randn(A, B, C, D, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 2, "B": 3, "C": 37, "D": 50},
    {"A": 1, "B": 5, "C": 129, "D": 100},
    {"A": 3, "B": 2, "C": 8, "D": 7},
]
