"""Causal attention scores: scores = (Q @ K^T) * (1 / sqrt(HEAD_DIM)), entries above the diagonal set to -inf.

Q and K are (BH, SEQ, HEAD_DIM) fp16 forward inputs (batch*heads, sequence, head dim); scores is (BH, SEQ, SEQ) fp16,
with scores[b, i, j] = -inf for j > i. The Triton version accumulates Q @ K^T in fp32 per (bh, tile), scales in fp32,
applies the causal mask with tl.where and casts to fp16 at the store.

Known problems:
- _causal_scores_kernel: tiles that lie entirely above the diagonal (pid_n * BLOCK_N > pid_m * BLOCK_M + BLOCK_M - 1) still load Q/K and run the full tl.dot before every value is overwritten with -inf; almost half of the MMA work and K/Q traffic is wasted (such tiles only need a -inf fill).
- ModelNew.forward launch: fixed BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=4, default num_stages; no autotuning. With HEAD_DIM=64 the K loop runs only 2 iterations, so the kernel is dominated by the (BH, SEQ, SEQ) fp16 store and BLOCK_K could simply cover the whole head dim.
- _causal_scores_kernel K loop: k_mask applied to both loads every iteration although HEAD_DIM=64 is a multiple of BLOCK_K.
- _causal_scores_kernel K^T tile: loaded through strides as a (BLOCK_K, BLOCK_N) tile whose contiguous dimension is HEAD_DIM, without block pointers / TMA, which may limit load vectorization.
- _causal_scores_kernel program-id mapping: row-major tile order per bh (grid axis 1 = bh) with no grouping.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

BH = 32
SEQ = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        s = q.shape[1]
        scale = 1.0 / math.sqrt(q.shape[2])
        scores = torch.matmul(q, k.transpose(-1, -2)) * scale
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=q.device), diagonal=1)
        return scores.masked_fill(mask, float("-inf"))


@triton.jit
def _causal_scores_kernel(
    q_ptr, k_ptr, y_ptr,
    S, D, scale,
    stride_qb, stride_qs, stride_qd,
    stride_kb, stride_ks, stride_kd,
    stride_yb, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    bid = tl.program_id(1)
    num_pid_n = tl.cdiv(S, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < S
    n_mask = offs_n < S

    q_base = q_ptr + bid * stride_qb
    k_base = k_ptr + bid * stride_kb

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, D, BLOCK_K):
        k_idx = k0 + offs_k
        k_mask = k_idx < D
        q = tl.load(q_base + offs_m[:, None] * stride_qs + k_idx[None, :] * stride_qd,
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        # (BLOCK_K, BLOCK_N) tile of K^T
        kt = tl.load(k_base + k_idx[:, None] * stride_kd + offs_n[None, :] * stride_ks,
                     mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(q, kt)

    acc = acc * scale
    causal = offs_n[None, :] > offs_m[:, None]
    acc = tl.where(causal, float("-inf"), acc)
    tl.store(y_ptr + bid * stride_yb + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             acc.to(tl.float16), mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        Bh, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        y = torch.empty((Bh, S, S), device=q.device, dtype=torch.float16)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(S, BLOCK_M) * triton.cdiv(S, BLOCK_N), Bh)
        _causal_scores_kernel[grid](
            q, k, y,
            S, D, scale,
            q.stride(0), q.stride(1), q.stride(2),
            k.stride(0), k.stride(1), k.stride(2),
            y.stride(0), y.stride(1), y.stride(2),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=4,
        )
        return y


def get_inputs():
    q = torch.randn(BH, SEQ, HEAD_DIM, dtype=torch.float16)
    k = torch.randn(BH, SEQ, HEAD_DIM, dtype=torch.float16)
    return [q, k]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BH": 2, "SEQ": 256, "HEAD_DIM": 64},
    {"BH": 3, "SEQ": 150, "HEAD_DIM": 40},
]
