"""Attention forward (one query block per program, online softmax over key blocks)."""

import triton
import triton.language as tl


# tritonlens: BLOCK_M=128, BLOCK_N=64, HEAD_DIM=64, q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16
@triton.jit
def attention_fwd(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    seq_len,
    stride_s,
    sm_scale,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * stride_s + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        kt = tl.load(k_ptr + (start + offs_n)[None, :] * stride_s + offs_d[:, None])
        v = tl.load(v_ptr + (start + offs_n)[:, None] * stride_s + offs_d[None, :])
        s = tl.dot(q, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(tl.float16))
