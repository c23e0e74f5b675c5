"""Gather through loaded indices: the address of each element depends on data."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    vals = tl.load(src_ptr + idx, mask=mask)
    tl.store(out_ptr + offs, vals, mask=mask)


if __name__ == "__main__":
    src = torch.randn(4096, dtype=torch.float32)
    idx = torch.randint(0, 4096, (4096,), dtype=torch.int32)
    out = torch.empty(4096, dtype=torch.float32)
    gather_kernel[(16,)](src, idx, out, 4096, BLOCK=256)
