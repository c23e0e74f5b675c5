"""Single-query decode attention with grouped-query heads (non-causal over all keys):
out[b, h] = softmax(q[b, h] @ k[b, h // (HQ // HKV)]^T / sqrt(D)) @ v[b, h // (HQ // HKV)]; q (B, HQ, 1, D), k,v (B, HKV, S, D), bf16.
Known problems:
- One program per (batch, query head): each KV head is re-read by all HQ // HKV query heads of its group.
- No split-K over the sequence (flash-decoding); only B*HQ programs, which can under-fill the GPU for small batches.
- Scores use broadcast-multiply + tl.sum on CUDA cores instead of tensor cores.
- Fixed BLOCK_N/num_warps, no autotune; sequence tail mask applied on every tile.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 8
HQ = 32
HKV = 8
S = 8192
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        group = q.shape[1] // k.shape[1]
        d = q.shape[-1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, v)


@triton.jit
def _decode_gqa_fwd(
    Q, K, V, O, sm_scale,
    NHQ, GROUP, SEQ,
    sqb, sqh, sqd,
    skb, skh, sks, skd,
    svb, svh, svs, svd,
    sob, soh, sod,
    HEAD_D: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    b = pid // NHQ
    hq = pid % NHQ
    hkv = hq // GROUP

    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HEAD_D

    q = tl.load(Q + b * sqb + hq * sqh + offs_d * sqd, mask=d_mask, other=0.0).to(tl.float32)
    q = q * sm_scale

    m_i = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    l_i = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    acc = tl.zeros([BLOCK_D], tl.float32)

    k_base = K + b * skb + hkv * skh
    v_base = V + b * svb + hkv * svh

    for start_n in range(0, SEQ, BLOCK_N):
        cols = start_n + offs_n
        n_mask = cols < SEQ
        kk = tl.load(k_base + cols[:, None] * sks + offs_d[None, :] * skd,
                     mask=n_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)
        s = tl.sum(kk * q[None, :], axis=1)
        s = tl.where(n_mask, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)

        vv = tl.load(v_base + cols[:, None] * svs + offs_d[None, :] * svd,
                     mask=n_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * vv, axis=0)
        m_i = m_new

    out = acc / l_i
    tl.store(O + b * sob + hq * soh + offs_d * sod, out.to(O.dtype.element_ty), mask=d_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        bsz, nhq, _, hd = q.shape
        nhkv = k.shape[1]
        seq = k.shape[2]
        o = torch.empty_like(q)
        BLOCK_N = 64
        BLOCK_D = triton.next_power_of_2(hd)
        grid = (bsz * nhq,)
        _decode_gqa_fwd[grid](
            q, k, v, o, 1.0 / math.sqrt(hd),
            nhq, nhq // nhkv, seq,
            q.stride(0), q.stride(1), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            o.stride(0), o.stride(1), o.stride(3),
            HEAD_D=hd, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
            num_warps=4,
        )
        return o


def get_inputs():
    q = torch.randn(B, HQ, 1, D, dtype=torch.bfloat16)
    k = torch.randn(B, HKV, S, D, dtype=torch.bfloat16)
    v = torch.randn(B, HKV, S, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "HQ": 4, "HKV": 2, "S": 100, "D": 128},
    {"B": 1, "HQ": 8, "HKV": 2, "S": 257, "D": 64},
    {"B": 3, "HQ": 6, "HKV": 3, "S": 190, "D": 128},
]
