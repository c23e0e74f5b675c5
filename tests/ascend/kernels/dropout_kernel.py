"""Dropout: tl.rand compares integers inside its lowering, while the kernel itself compares only floats."""

import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    r = tl.rand(seed, offs)
    tl.store(out_ptr + offs, tl.where(r > p, x / (1 - p), 0.0), mask=offs < n)
