"""Value-dependent findings: `stride` multiplies the contiguous index. With no visible value the finding only
holds when the launch's stride is not 1 (the JIT specializes 1 to a constant); with a pragma it is certain."""

import triton
import triton.language as tl


# tritonlens: BLOCK=1024
@triton.jit
def copy_unknown_stride(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


# tritonlens: BLOCK=1024, stride=3, n=1000
@triton.jit
def copy_known_stride(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)
