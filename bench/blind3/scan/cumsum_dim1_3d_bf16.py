"""Cumulative sum along the middle axis of a 3-D bf16 tensor.

out = torch.cumsum(x, dim=1), x: (BATCH, SEQ, HIDDEN) bf16, out: (BATCH, SEQ, HIDDEN) bf16.
Accumulation is done in fp32, each output rounded to bf16.

Known problems:
- lines 46, 30: parallelism is only BATCH * HIDDEN / BLOCK_D programs (256 at the benchmark shape); the scan
  axis is walked sequentially by one program, with no split of SEQ across programs (no decoupled look-back)
- lines 44-45: BLOCK_L / BLOCK_D fixed at 64 regardless of shape, no autotuning of tile or num_warps
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
SEQ = 2048
HIDDEN = 512


@triton.jit
def _cumsum_dim1_kernel(x_ptr, out_ptr, seq, hidden,
                        BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols < hidden
    base = pid_b.to(tl.int64) * seq * hidden
    carry = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for l0 in range(0, seq, BLOCK_L):
        rows = l0 + tl.arange(0, BLOCK_L)
        mask = (rows < seq)[:, None] & col_mask[None, :]
        offs = base + rows.to(tl.int64)[:, None] * hidden + cols[None, :]
        tile = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        cs = tl.cumsum(tile, axis=0) + carry[None, :]
        tl.store(out_ptr + offs, cs.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(tile, axis=0)


def cumsum_dim1(x):
    x = x.contiguous()
    b, seq, hidden = x.shape
    out = torch.empty_like(x)
    BLOCK_L = 64
    BLOCK_D = 64
    grid = (b, triton.cdiv(hidden, BLOCK_D))
    _cumsum_dim1_kernel[grid](x, out, seq, hidden, BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum_dim1(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "SEQ": 129, "HIDDEN": 37},
    {"BATCH": 2, "SEQ": 256, "HIDDEN": 128},
]
