"""Position ids from a left-padded attention mask.

Computes pos = (torch.cumsum(mask, dim=1) - 1) * mask for mask (B, S) int64 of 0/1
values (left padding: a random number of zeros first, then ones). Output is int64 (B, S);
padded positions get 0, real tokens get 0, 1, 2, ...

Benchmark shape: B=64, S=8192 (int64).

Known problems:
- L41-L53: one program per row, so only B=64 programs run on a 132-SM GPU; most SMs idle.
- L46-L53: the row is walked serially in BLOCK_S chunks with a loop-carried running sum, so each program does S/BLOCK_S dependent iterations with no parallelism across chunks.
- L50-L53: the cumsum and running sum are done in 64-bit integer arithmetic although positions fit in int32 (int64 scans are slower; I/O must stay int64).
- L61: fixed BLOCK_S=1024 with default num_warps, never tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 64
S = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, mask):
        return (torch.cumsum(mask, dim=1) - 1) * mask


@triton.jit
def mask_positions_kernel(
    mask_ptr,
    out_ptr,
    S,
    stride_m,
    stride_o,
    BLOCK_S: tl.constexpr,
):
    row = tl.program_id(0)
    m_row = mask_ptr + row * stride_m
    o_row = out_ptr + row * stride_o
    running = tl.zeros([1], dtype=tl.int64)
    offs = tl.arange(0, BLOCK_S)
    for start in range(0, S, BLOCK_S):
        cols = start + offs
        valid = cols < S
        m = tl.load(m_row + cols, mask=valid, other=0)
        c = tl.cumsum(m, axis=0) + running
        pos = (c - 1) * m
        tl.store(o_row + cols, pos, mask=valid)
        running += tl.sum(m, axis=0)


def mask_positions(mask):
    assert mask.dim() == 2
    mask = mask.contiguous()
    Bn, Sn = mask.shape
    out = torch.empty_like(mask)
    BLOCK_S = 1024
    grid = (Bn,)
    mask_positions_kernel[grid](
        mask,
        out,
        Sn,
        mask.stride(0),
        out.stride(0),
        BLOCK_S=BLOCK_S,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, mask):
        return mask_positions(mask)


def get_inputs():
    pad = torch.randint(0, S, (B,))
    cols = torch.arange(S)[None, :]
    mask = (cols >= pad[:, None]).to(torch.int64)
    return [mask]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 3, "S": 37},
    {"B": 5, "S": 1500},
    {"B": 2, "S": 2048},
]
