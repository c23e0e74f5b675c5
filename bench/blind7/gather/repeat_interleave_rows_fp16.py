"""Repeat-interleave rows of an fp16 matrix with per-row repeat counts.

Computes torch.repeat_interleave(x, repeats, dim=0).
  x:       (M, N) float16, contiguous
  repeats: (M,)   int64, random in [0, 4]
  out:     (repeats.sum(), N) float16

Known problems:
- The output row offsets come from a separate torch.cumsum launch, and sizing the output
  needs a device-to-host sync (.item()) before the copy kernel can launch.
- One program per input row writes its repeats serially in a loop; work per program is
  uneven (0 to 4 rows) and rows with repeats=0 still load their input.
- BLOCK_N=512 is fixed; no multiple rows per program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, repeats):
        return torch.repeat_interleave(x, repeats, dim=0)


@triton.jit
def repeat_rows_kernel(x_ptr, rep_ptr, start_ptr, out_ptr, N,
                       BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs_n < N
    r = tl.load(rep_ptr + row)
    start = tl.load(start_ptr + row)
    v = tl.load(x_ptr + row.to(tl.int64) * N + offs_n, mask=mask)
    for j in range(0, r):
        tl.store(out_ptr + (start + j) * N + offs_n, v, mask=mask)


def repeat_interleave_rows(x, repeats):
    x = x.contiguous()
    repeats = repeats.contiguous()
    m, n = x.shape
    ends = torch.cumsum(repeats, dim=0)
    total = int(ends[-1].item()) if m > 0 else 0
    starts = (ends - repeats).contiguous()
    out = torch.empty((total, n), device=x.device, dtype=x.dtype)
    if total == 0:
        return out
    BLOCK_N = 512
    grid = (m, triton.cdiv(n, BLOCK_N))
    repeat_rows_kernel[grid](x, repeats, starts, out, n, BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, repeats):
        return repeat_interleave_rows(x, repeats)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    repeats = torch.randint(0, 5, (M,), dtype=torch.int64)
    return [x, repeats]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 100},
    {"M": 129, "N": 600},
    {"M": 3, "N": 7},
]
