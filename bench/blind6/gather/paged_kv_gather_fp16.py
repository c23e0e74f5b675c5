"""Paged KV-cache gather, fp16.

cache: (NUM_BLOCKS, BLOCK, H, D) fp16; block_table: (B, MAXB) int32 (each row
holds distinct block ids). out: (B, MAXB*BLOCK, H, D) fp16 with
out[b, i*BLOCK + t] = cache[block_table[b, i], t].
Benchmark shape: NUM_BLOCKS=2048, BLOCK=16, H=8, D=128, B=32, MAXB=64.

Known problems:
- lines 48-52: each program copies its 16384-element block in a serial loop of 1024-element (2 KB) chunks, with masks every iteration even though the block size divides evenly; few bytes in flight per program
- line 64: default num_warps and no tuning of COPY_BLOCK; otherwise this is a plain bandwidth-bound copy and I see no larger structural problem
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_BLOCKS = 2048
BLOCK = 16
H = 8
D = 128
B = 32
MAXB = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, cache, block_table):
        nb, blk, h, d = cache.shape
        bsz, maxb = block_table.shape
        out = cache[block_table.long()]  # (B, MAXB, BLOCK, H, D)
        return out.reshape(bsz, maxb * blk, h, d)


@triton.jit
def paged_gather_kernel(cache_ptr, table_ptr, out_ptr,
                        MAX_BLOCKS, BLOCK_ELEMS,
                        COPY_BLOCK: tl.constexpr):
    # one program per (sequence, logical block); copies one whole cache block,
    # which is BLOCK*H*D contiguous elements in both source and destination
    b = tl.program_id(0)
    i = tl.program_id(1)
    blk_id = tl.load(table_ptr + b * MAX_BLOCKS + i).to(tl.int64)
    src = cache_ptr + blk_id * BLOCK_ELEMS
    dst = out_ptr + (b * MAX_BLOCKS + i).to(tl.int64) * BLOCK_ELEMS
    offs = tl.arange(0, COPY_BLOCK)
    for e0 in range(0, BLOCK_ELEMS, COPY_BLOCK):
        e = e0 + offs
        m = e < BLOCK_ELEMS
        vals = tl.load(src + e, mask=m)
        tl.store(dst + e, vals, mask=m)


def paged_kv_gather(cache, block_table):
    cache = cache.contiguous()
    block_table = block_table.contiguous()
    nb, blk, h, d = cache.shape
    bsz, maxb = block_table.shape
    out = torch.empty((bsz, maxb * blk, h, d), device=cache.device, dtype=cache.dtype)
    block_elems = blk * h * d
    COPY_BLOCK = 1024
    grid = (bsz, maxb)
    paged_gather_kernel[grid](cache, block_table, out, maxb, block_elems, COPY_BLOCK=COPY_BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, cache, block_table):
        return paged_kv_gather(cache, block_table)


def get_inputs():
    cache = torch.randn(NUM_BLOCKS, BLOCK, H, D, dtype=torch.float16)
    block_table = torch.stack([torch.randperm(NUM_BLOCKS)[:MAXB] for _ in range(B)]).to(torch.int32)
    return [cache, block_table]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"NUM_BLOCKS": 64, "BLOCK": 16, "H": 2, "D": 32, "B": 2, "MAXB": 8},
    {"NUM_BLOCKS": 37, "BLOCK": 5, "H": 3, "D": 100, "B": 3, "MAXB": 7},
]
