"""The Ascend-friendly shape: one program per vector core, a loop over blocks, aligned unmasked tiles."""

import triton
import triton.language as tl


@triton.jit
def persistent_add_kernel(x_ptr, y_ptr, out_ptr, NUM_BLOCKS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for block in range(pid, NUM_BLOCKS, tl.num_programs(0)):
        offs = block * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, x * y + x)


def launch(x, y, out):
    persistent_add_kernel[(40,)](x, y, out, NUM_BLOCKS=4096, BLOCK=2048)
