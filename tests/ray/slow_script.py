"""A run-job harness that takes a few seconds (so a test can kill or cancel it mid-job), then launches one kernel."""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


time.sleep(4.0)
x = torch.arange(100, dtype=torch.float32)
out = torch.empty_like(x)
double_kernel[(2,)](x, out, 100, BLOCK=64)
assert torch.equal(out, 2 * x)
