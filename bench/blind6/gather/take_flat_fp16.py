"""Flat gather (torch.take), fp16.

out = x.flatten()[idx].
x: (R, C) fp16, idx: (NIDX,) int64 uniform in [0, x.numel()) -> out: (NIDX,) fp16.
Benchmark shape: R = 4096, C = 4096, NIDX = 16777216.

Known problems:
- lines 34-36: no cache/eviction hints: idx (128 MiB int64) and out (32 MiB) are streamed once and could be evict_first, while x (32 MiB, which nearly fits in L2) should be kept (evict_last); as written the streams push x out of L2 and random 2-byte reads each cost a full sector from HBM.
- lines 43-45: fixed BLOCK=1024 / num_warps=4, no autotuning. Beyond that the kernel is one read of idx, one gather and one write per element, so the random-access cost is mostly inherent to the task.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

R = 4096
C = 4096
NIDX = 16777216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return x.flatten()[idx]


@triton.jit
def _take_kernel(x_ptr, idx_ptr, out_ptr, n_idx, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_idx
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    vals = tl.load(x_ptr + idx, mask=mask, other=0.0)
    tl.store(out_ptr + offs, vals, mask=mask)


def take_flat(x, idx):
    x_flat = x.contiguous().view(-1)
    n_idx = idx.numel()
    out = torch.empty((n_idx,), dtype=x.dtype, device=x.device)
    BLOCK = 1024
    grid = (triton.cdiv(n_idx, BLOCK),)
    _take_kernel[grid](x_flat, idx, out, n_idx, BLOCK=BLOCK, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return take_flat(x, idx)


def get_inputs():
    x = torch.randn(R, C, dtype=torch.float16)
    idx = torch.randint(0, R * C, (NIDX,), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"R": 64, "C": 64, "NIDX": 4096},
    {"R": 37, "C": 100, "NIDX": 1000},
    {"R": 129, "C": 33, "NIDX": 5001},
]
