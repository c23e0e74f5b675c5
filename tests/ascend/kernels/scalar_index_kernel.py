"""A reduction used as an address: the scalar unit reads a tile value and loads one element from it."""

import triton
import triton.language as tl


@triton.jit
def scalar_index_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * n + offs, mask=offs < n, other=0.0)
    total = tl.sum(x, axis=0)
    scale = tl.load(x_ptr + total.to(tl.int32))
    tl.store(out_ptr + pid, total * scale)
