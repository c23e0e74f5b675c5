"""Control flow around loads that must not be called redundant: a spin on a volatile flag, a load only in
the first iteration, the same load in both branches of an `if`."""

import triton
import triton.language as tl


# tritonlens: BLOCK=256
@triton.jit
def flag_wait(flag_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# tritonlens: BLOCK=256
@triton.jit
def first_iter_only(scale_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        if start == 0:
            x = x * tl.load(scale_ptr)
        acc += x
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


# tritonlens: BLOCK=256
@triton.jit
def branches(x_ptr, out_ptr, n, flip, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if flip > 0:
        y = tl.load(x_ptr + offs, mask=offs < n)
    else:
        y = tl.load(x_ptr + offs, mask=offs < n) * 2.0
    tl.store(out_ptr + offs, y, mask=offs < n)
