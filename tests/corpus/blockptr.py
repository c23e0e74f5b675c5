"""Block pointers: triton expands `tl.load(block_ptr)` into 64-bit offset arithmetic on the access line."""

import triton
import triton.language as tl


# tritonlens: BLOCK_M=64, BLOCK_N=64
@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (stride_m, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (stride_m, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))
