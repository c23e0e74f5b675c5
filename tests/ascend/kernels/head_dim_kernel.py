"""Tiles whose last axis is fixed by the problem, not by a tile size: a head dimension feeding the cube unit, and
an algorithm's literal 16x16 blocks. Only the block size along the other axis is the author's choice."""

import triton
import triton.language as tl


@triton.jit
def head_dim_kernel(q_ptr, k_ptr, t_ptr, out_ptr, tri_ptr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + rows[:, None] * HEAD_DIM + dims[None, :])
    k = tl.load(k_ptr + rows[:, None] * HEAD_DIM + dims[None, :])
    s = tl.dot(q, tl.trans(k))
    tl.store(out_ptr + rows[:, None] * BLOCK_M + tl.arange(0, BLOCK_M)[None, :], s)
    sub = tl.arange(0, 16)
    t = tl.load(t_ptr + sub[:, None] * 16 + sub[None, :])
    tl.store(tri_ptr + sub[:, None] * 16 + sub[None, :], tl.dot(t, t))
