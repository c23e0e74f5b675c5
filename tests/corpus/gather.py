"""Gather: rows picked through an index tensor (embedding lookup), contiguous within a row."""

import triton
import triton.language as tl


# tritonlens: BLOCK=1024, idx_ptr=*i32
@triton.jit
def gather_elements(table_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    vals = tl.load(table_ptr + idx, mask=mask)
    tl.store(out_ptr + offs, vals, mask=mask)


# tritonlens: D=256, idx_ptr=*i64
@triton.jit
def embedding_rows(table_ptr, idx_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    idx = tl.load(idx_ptr + row)
    cols = tl.arange(0, D)
    vals = tl.load(table_ptr + idx * D + cols)
    tl.store(out_ptr + row * D + cols, vals)
