"""Integer arithmetic on int64 tensors: the Ascend vector unit has no int64 multiply/compare lanes."""

import triton
import triton.language as tl


@triton.jit
def int64_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = x * 3 + 7
    keep = y > 100
    tl.store(out_ptr + offs, tl.where(keep, y, x), mask=mask)
