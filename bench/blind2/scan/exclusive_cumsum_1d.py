"""out[i] = sum_{k < i} x[k]  (exclusive prefix sum, torch.cumsum(x, 0) - x); x int32 (N,), out int32 (N,).

Three launches (reduce-then-scan): (1) one program per BLOCK chunk writes the chunk's sum; (2) a single program
walks the array of chunk sums in BLOCK-wide pieces and writes their exclusive prefix (the offset of every chunk);
(3) one program per chunk re-reads the chunk, does an in-chunk tl.cumsum, subtracts x to make it exclusive and adds
the chunk's offset.

Known problems:
- lines 59-61: reduce-then-scan in three launches: x is read twice from HBM (two reads + one write instead of one read + one write); a single-pass decoupled look-back scan would cut traffic by a third and two launches.
- line 60: the middle scan runs in a single program (one SM) serially over all block sums, on the critical path between the two big kernels.
- line 54: BLOCK = 1024 makes 16384 small programs and 16384 block sums; a larger block (e.g. 4096-8192 elements) would cut per-program overhead and the serial middle pass.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

LENGTH = 16777216


@triton.jit
def block_sum_kernel(x_ptr, sums_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0)
    tl.store(sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def scan_block_sums_kernel(sums_ptr, prefix_ptr, num_blocks, BLOCK: tl.constexpr):
    carry = tl.full([], 0, dtype=tl.int32)
    for start in range(0, num_blocks, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < num_blocks
        s = tl.load(sums_ptr + offs, mask=mask, other=0)
        incl = tl.cumsum(s, axis=0)
        tl.store(prefix_ptr + offs, incl - s + carry, mask=mask)
        carry += tl.sum(s, axis=0)


@triton.jit
def block_scan_kernel(x_ptr, prefix_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    incl = tl.cumsum(x, axis=0)
    base = tl.load(prefix_ptr + pid)
    tl.store(out_ptr + offs, incl - x + base, mask=mask)


def exclusive_cumsum_1d(x):
    n = x.shape[0]
    BLOCK = 1024
    num_blocks = triton.cdiv(n, BLOCK)
    sums = torch.empty(num_blocks, dtype=torch.int32, device=x.device)
    prefix = torch.empty(num_blocks, dtype=torch.int32, device=x.device)
    out = torch.empty_like(x)
    block_sum_kernel[(num_blocks,)](x, sums, n, BLOCK=BLOCK)
    scan_block_sums_kernel[(1,)](sums, prefix, num_blocks, BLOCK=BLOCK)
    block_scan_kernel[(num_blocks,)](x, prefix, out, n, BLOCK=BLOCK)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, 0, dtype=torch.int32) - x


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return exclusive_cumsum_1d(x)


def get_inputs():
    x = torch.randint(0, 8, (LENGTH,), dtype=torch.int32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"LENGTH": 1029},
    {"LENGTH": 5003},
    {"LENGTH": 3079},
]
