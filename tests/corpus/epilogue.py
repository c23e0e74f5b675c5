"""Layout conversions that are the normal price of a kernel's structure (issue 24): a loaded tile re-laid out as a
dot operand inside the loop, and an accumulated tile re-laid out once for its store after the loop."""

import triton
import triton.language as tl


@triton.jit
def scores_transposed(q_ptr, k_ptr, out_ptr, N, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + cols[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + keys[:, None] * D + cols[None, :])
        acc += tl.dot(q, tl.trans(k))
    tl.store(out_ptr + rows[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], acc)


@triton.jit
def combine_splits(part_ptr, out_ptr, S, M, D: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for s in range(S):
        acc += tl.load(part_ptr + s * M * D + rows[:, None] * D + cols[None, :])
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], acc)


@triton.jit
def decode_group(q_ptr, k_ptr, v_ptr, out_ptr, N, D: tl.constexpr, GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    # one program per KV head: its GROUP query heads attend to the same keys (decode, one query per head)
    head = tl.program_id(0)
    rows = tl.arange(0, GROUP)
    cols = tl.arange(0, D)
    q = tl.load(q_ptr + (head * GROUP + rows[:, None]) * D + cols[None, :])
    acc = tl.zeros((GROUP, D), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + (head * N + keys[:, None]) * D + cols[None, :])
        p = tl.dot(q, tl.trans(k)).to(tl.float16)
        v = tl.load(v_ptr + (head * N + keys[:, None]) * D + cols[None, :])
        acc += tl.dot(p, v)
    tl.store(out_ptr + (head * GROUP + rows[:, None]) * D + cols[None, :], acc)


@triton.jit
def rows_from_offsets(x_ptr, starts_ptr, out_ptr, BLOCK: tl.constexpr):
    # starts_ptr holds int64 row offsets (the caller's LongTensor): its width is not the kernel's choice
    seg = tl.program_id(0)
    start = tl.load(starts_ptr + seg)
    offs = start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
