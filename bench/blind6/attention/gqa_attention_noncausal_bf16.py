"""Non-causal grouped-query attention, bf16.

q (B, HQ, S, D), k and v (B, HKV, S, D), all bf16; query head h attends with
key/value head h // (HQ // HKV); softmax(q k^T / sqrt(D)) v, no mask.
Output (B, HQ, S, D) bf16.
Benchmark shape: B=4, HQ=32, HKV=4, S=1024, D=128.

Known problems:
- lines 115, 118-127: BLOCK_M=BLOCK_N=64 with default num_warps/num_stages and no autotuning; for D=128 on H100 a 128-row query tile with 8 warps and deeper K/V pipelining is usual.
- lines 60-63, 117: GQA sharing is not exploited: each of the 8 query heads that share a KV head is a separate program that reloads the same K/V tiles (only L2 dedups it), instead of one program processing the whole query-head group per KV tile.
- lines 94, 97-99: the 1/sqrt(D) scale is multiplied into every QK tile and tl.exp is used, instead of folding scale*log2(e) into q once and using exp2.
- lines 84-89, 95: K/V loads and the column mask (tl.where) are applied on every KV iteration although S is a multiple of BLOCK_N in the benchmark.
- line 105: final normalisation divides every element by l_i instead of multiplying by a per-row reciprocal (minor).
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 4
HQ = 32
HKV = 4
S = 1024
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        hq = q.shape[1]
        hkv = k.shape[1]
        group = hq // hkv
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scale = 1.0 / math.sqrt(q.shape[-1])
        return F.scaled_dot_product_attention(q, k, v, is_causal=False, scale=scale)


_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


@triton.jit
def gqa_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    S, D, HQ, GROUP, sm_scale,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // HQ
    h = pid_bh % HQ
    hk = h // GROUP

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < D

    q_ptrs = q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=(offs_m[:, None] < S) & mask_d[None, :], other=0.0)
    if UPCAST_DOT:
        # Triton's CPU interpreter mis-multiplies bf16 tl.dot operands.
        q = q.to(tl.float32)

    k_base = k_ptr + b * stride_kb + hk * stride_kh
    v_base = v_ptr + b * stride_vb + hk * stride_vh

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    for n0 in range(0, S, BLOCK_N):
        kn = n0 + offs_n
        mask_n = kn < S
        k = tl.load(k_base + kn[:, None] * stride_ks + offs_d[None, :] * stride_kd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        v = tl.load(v_base + kn[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        if UPCAST_DOT:
            k = k.to(tl.float32)
            v = v.to(tl.float32)

        qk = tl.dot(q, tl.trans(k)) * sm_scale
        qk = tl.where(mask_n[None, :], qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=(offs_m[:, None] < S) & mask_d[None, :])


def gqa_attention(q, k, v):
    Bsz, Hq, Sq, Dh = q.shape
    Hkv = k.shape[1]
    group = Hq // Hkv
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    BLOCK_D = triton.next_power_of_2(Dh)
    grid = (triton.cdiv(Sq, BLOCK_M), Bsz * Hq)
    gqa_fwd_kernel[grid](
        q, k, v, o,
        Sq, Dh, Hq, group, 1.0 / math.sqrt(Dh),
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        UPCAST_DOT=_INTERPRET,
    )
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return gqa_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, HQ, S, D, dtype=torch.bfloat16)
    k = torch.randn(B, HKV, S, D, dtype=torch.bfloat16)
    v = torch.randn(B, HKV, S, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "HQ": 4, "HKV": 2, "S": 128, "D": 64},
    {"B": 2, "HQ": 6, "HKV": 2, "S": 100, "D": 48},
]
