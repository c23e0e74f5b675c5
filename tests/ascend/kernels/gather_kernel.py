"""A gather: the load address comes from another load, so triton-ascend cannot prove a contiguous block."""

import triton
import triton.language as tl


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    vals = tl.load(src_ptr + idx, mask=mask, other=0.0)
    tl.store(out_ptr + offs, vals, mask=mask)
