"""Single-token decode attention against a long KV cache.

Computes out = softmax(q @ k^T / sqrt(D)) @ v for one query token per
(batch, head), i.e. torch.nn.functional.scaled_dot_product_attention(q, k, v)
with a query length of 1 (no mask).

Shapes / dtypes:
    q:    (B, H, 1, D) float16
    k, v: (B, H, L, D) float16, B=8, H=32, L=8192, D=128
    out:  (B, H, 1, D) float16

Known problems:
- One program per (batch, head) walks the whole 8192-long cache serially:
  only 256 programs, with no split over L (no split-K / flash-decoding), so
  memory bandwidth is under-used on a GPU with many SMs.
- The q.k and p.v products are done with broadcast-multiply + tl.sum on CUDA
  cores instead of tensor cores (fine for a 1-row query, but not vectorised
  across heads).
- Block size BLOCK_N=64, num_warps and num_stages are fixed, untuned guesses.
- Every K/V tile load is masked, even for full interior tiles.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 8
H = 32
L = 8192
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # softmax(q k^T / sqrt(D)) v, via the fused torch op
        return F.scaled_dot_product_attention(q, k, v)


@triton.jit
def _decode_attn_kernel(
    Q, K, V, O,
    stride_qb, stride_qh, stride_qd,
    stride_kb, stride_kh, stride_kl, stride_kd,
    stride_vb, stride_vh, stride_vl, stride_vd,
    stride_ob, stride_oh, stride_od,
    NH, KV_LEN, HEAD_DIM, qk_scale_log2,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    b = pid // NH
    h = pid % NH

    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < HEAD_DIM

    q = tl.load(Q + b * stride_qb + h * stride_qh + offs_d * stride_qd, mask=mask_d, other=0.0)
    q = q.to(tl.float32) * qk_scale_log2

    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    # running max / denominator kept as [1]-shaped tensors
    m_i = tl.full([1], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([1], dtype=tl.float32)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)

    for start_n in range(0, KV_LEN, BLOCK_N):
        cols = start_n + offs_n
        mask_n = cols < KV_LEN
        kv_mask = mask_n[:, None] & mask_d[None, :]
        k = tl.load(k_base + cols[:, None] * stride_kl + offs_d[None, :] * stride_kd,
                    mask=kv_mask, other=0.0)
        s = tl.sum(k.to(tl.float32) * q[None, :], axis=1)  # [BLOCK_N]
        s = tl.where(mask_n, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)

        v = tl.load(v_base + cols[:, None] * stride_vl + offs_d[None, :] * stride_vd,
                    mask=kv_mask, other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), axis=0)
        m_i = m_new

    out = acc / l_i
    tl.store(O + b * stride_ob + h * stride_oh + offs_d * stride_od,
             out.to(O.dtype.element_ty), mask=mask_d)


def triton_decode_attention(q, k, v):
    Bq, Hq, one, Dq = q.shape
    assert one == 1
    Lk = k.shape[2]
    out = torch.empty_like(q)
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(Dq))
    qk_scale_log2 = (1.0 / math.sqrt(Dq)) * 1.4426950408889634
    grid = (Bq * Hq,)
    _decode_attn_kernel[grid](
        q, k, v, out,
        q.stride(0), q.stride(1), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        out.stride(0), out.stride(1), out.stride(3),
        Hq, Lk, Dq, qk_scale_log2,
        BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return triton_decode_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, 1, D, dtype=torch.float16)
    k = torch.randn(B, H, L, D, dtype=torch.float16)
    v = torch.randn(B, H, L, D, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "H": 3, "L": 37, "D": 128},
    {"B": 1, "H": 4, "L": 1000, "D": 128},
    {"B": 3, "H": 2, "L": 129, "D": 40},
]
