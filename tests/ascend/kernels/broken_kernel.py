"""Does not compile: tl.arange needs constexpr bounds."""

import triton
import triton.language as tl


@triton.jit
def broken_kernel(x_ptr, n):
    offs = tl.arange(0, n)
    tl.store(x_ptr + offs, offs)
