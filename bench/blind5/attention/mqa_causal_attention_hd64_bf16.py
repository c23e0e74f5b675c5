"""Multi-query causal attention (one K/V head shared by all query heads).

q is (B, H, S, D) bf16; k and v are (B, 1, S, D) bf16, shared by all H query heads.
out = softmax(q k^T * (1/sqrt(D)) + causal_mask) v, (B, H, S, D) bf16; query i attends to keys j <= i.
Softmax and dot accumulation in fp32.
Benchmark shape: B = 4, H = 32, S = 2048, D = 64.
Under the Triton CPU interpreter (TRITON_INTERPRET=1) only, the dot operands are cast to fp32,
because the interpreter multiplies bf16 tl.dot operands wrongly; on the GPU the dots run in bf16.

Known problems:
- L113-L113: every (query block, head) program streams the shared K/V of its batch on its own, so the same K/V tiles are read H = 32 times (relying on L2); heads are not packed into one program to reuse a loaded K/V tile for several heads.
- L84-L85: the causal mask (compare + where) is applied to every key block, although only the diagonal blocks need it.
- L80-L89: softmax uses tl.exp with the scale multiplied into every qk tile, instead of folding scale*log2(e) into q once and using exp2.
- L110-L113: fixed BLOCK_M = BLOCK_N = 64, default num_warps/num_stages, no autotuning; causal query blocks have very different work and are launched in plain order with no load balancing.
"""
import math
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 4
H = 32
S = 2048
D = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        s = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale  # k broadcasts over heads
        n = q.shape[-2]
        causal = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~causal, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return torch.matmul(p, v.float()).to(q.dtype)


@triton.jit
def mqa_causal_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, head_dim, scale,
                      stride_qb, stride_qh, stride_qs, stride_qd,
                      stride_kb, stride_ks, stride_kd,
                      stride_vb, stride_vs, stride_vd,
                      stride_ob, stride_oh, stride_os, stride_od,
                      n_heads,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                      DOT_FP32: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // n_heads
    h = pid_bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_valid = offs_m < seq_len
    d_valid = offs_d < head_dim

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb  # single shared K/V head
    v_base = v_ptr + b * stride_vb
    o_base = o_ptr + b * stride_ob + h * stride_oh

    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=m_valid[:, None] & d_valid[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    end_n = tl.minimum((pid_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, end_n, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_valid = offs_n < seq_len
        kt = tl.load(k_base + offs_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=n_valid[None, :] & d_valid[:, None], other=0.0)
        if DOT_FP32:
            qk = tl.dot(q.to(tl.float32), kt.to(tl.float32)) * scale
        else:
            qk = tl.dot(q, kt) * scale
        keep = (offs_m[:, None] >= offs_n[None, :]) & n_valid[None, :]
        qk = tl.where(keep, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + offs_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=n_valid[:, None] & d_valid[None, :], other=0.0)
        if DOT_FP32:
            acc += tl.dot(p, v.to(tl.float32))
        else:
            acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             acc.to(o_ptr.dtype.element_ty), mask=m_valid[:, None] & d_valid[None, :])


def triton_mqa_causal_attention(q, k, v):
    b, h, s, d = q.shape
    assert k.shape == (b, 1, s, d) and v.shape == (b, 1, s, d)
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    BLOCK_D = max(16, triton.next_power_of_2(d))
    scale = 1.0 / math.sqrt(d)
    grid = (triton.cdiv(s, BLOCK_M), b * h)
    mqa_causal_kernel[grid](q, k, v, o, s, d, scale,
                            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                            k.stride(0), k.stride(2), k.stride(3),
                            v.stride(0), v.stride(2), v.stride(3),
                            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
                            h,
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
                            DOT_FP32=os.environ.get("TRITON_INTERPRET") == "1")
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return triton_mqa_causal_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    k = torch.randn(B, 1, S, D, dtype=torch.bfloat16)
    v = torch.randn(B, 1, S, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 4, "S": 64, "D": 64},
    {"B": 2, "H": 3, "S": 37, "D": 64},
    {"B": 1, "H": 2, "S": 129, "D": 64},
]
