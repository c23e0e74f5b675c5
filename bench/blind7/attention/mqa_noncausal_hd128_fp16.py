"""Non-causal multi-query attention (one shared K/V head), head dim 128.

Computes out = torch.nn.functional.scaled_dot_product_attention(
    q, k.expand(B, H, S, D), v.expand(B, H, S, D))
i.e. every query head attends to the same single key/value head, no mask,
default scale 1/sqrt(D).

Shapes / dtypes:
    q:    (B, H, S, D) float16, B=2, H=16, S=2048, D=128
    k, v: (B, 1, S, D) float16 (shared by all H heads)
    out:  (B, H, S, D) float16

Known problems:
- Each (query block, head) program reloads the shared K/V tiles on its own;
  the 16 heads that share one K/V head are not processed together in one
  program, so K/V reuse across heads relies on L2 hits.
- Block sizes (BLOCK_M=64, BLOCK_N=64), num_warps=4 and num_stages=2 are
  fixed guesses, not tuned for D=128.
- K/V tile loads are always masked, even for full interior tiles.
- The softmax normalisation and rescaling are done in the simplest order
  (rescale acc every iteration), with no lazy-rescale trick.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 2
H = 16
S = 2048
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        nh = q.shape[1]
        k = k.expand(-1, nh, -1, -1)
        v = v.expand(-1, nh, -1, -1)
        return F.scaled_dot_product_attention(q, k, v)


@triton.jit
def _mqa_fwd_kernel(
    Q, K, V, O,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    NH, GROUP, SEQ, HEAD_DIM, qk_scale_log2,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // NH
    h = pid_bh % NH
    kv_h = h // GROUP  # always 0 for MQA (GROUP == NH)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < SEQ
    mask_d = offs_d < HEAD_DIM

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=mask_m[:, None] & mask_d[None, :], other=0.0)

    k_base = K + b * stride_kb + kv_h * stride_kh
    v_base = V + b * stride_vb + kv_h * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)

    for start_n in range(0, SEQ, BLOCK_N):
        cols = start_n + offs_n
        mask_n = cols < SEQ
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=mask_n[None, :] & mask_d[:, None], other=0.0)  # [BLOCK_D, BLOCK_N]
        s = tl.dot(q, kt) * qk_scale_log2
        s = tl.where(mask_n[None, :], s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)

        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=mask_m[:, None] & mask_d[None, :])


def triton_mqa(q, k, v):
    Bq, Hq, Sq, Dq = q.shape
    Hkv = k.shape[1]
    assert Hq % Hkv == 0
    out = torch.empty_like(q)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(Dq))
    qk_scale_log2 = (1.0 / math.sqrt(Dq)) * 1.4426950408889634
    grid = (triton.cdiv(Sq, BLOCK_M), Bq * Hq)
    _mqa_fwd_kernel[grid](
        q, k, v, out,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        Hq, Hq // Hkv, Sq, Dq, qk_scale_log2,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return triton_mqa(q, k, v)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.float16)
    k = torch.randn(B, 1, S, D, dtype=torch.float16)
    v = torch.randn(B, 1, S, D, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 3, "S": 37, "D": 128},
    {"B": 2, "H": 4, "S": 100, "D": 64},
    {"B": 1, "H": 2, "S": 129, "D": 128},
]
