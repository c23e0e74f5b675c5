"""A kernel the compiler rejects: tl.arange needs a power-of-two range."""

import triton
import triton.language as tl


# tritonlens: BLOCK=100, x_ptr=*fp32
@triton.jit
def bad_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0)
