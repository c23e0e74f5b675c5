"""A block too large for the Unified Buffer: bishengir's PlanMemory reports the overflow with its numbers."""

import triton
import triton.language as tl


# tritonlens: BLOCK=65536, x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32
@triton.jit
def ub_overflow_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + x, mask=mask)


# tritonlens: BLOCK=1024, x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32
@triton.jit
def fits_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + x, mask=mask)
