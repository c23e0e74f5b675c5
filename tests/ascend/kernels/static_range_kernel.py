"""tl.static_range unrolls the body at compile time: every copy gets its own buffers."""

import triton
import triton.language as tl


@triton.jit
def static_range_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(STEPS):
        acc += tl.load(x_ptr + (pid * STEPS + i) * BLOCK + offs)
    tl.store(out_ptr + pid * BLOCK + offs, acc)
