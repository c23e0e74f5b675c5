"""InfoNCE contrastive loss: logits = (q @ k^T) / temperature, loss = cross_entropy(logits.float(), arange(N)), mean.

q and k are (N, D) fp16 forward inputs (rows L2-normalised in get_inputs, as InfoNCE embeddings usually are);
temperature = 0.07 is a constructor argument. The output is a 0-dim fp32 scalar.
The Triton version never materialises the (N, N) logits: each program owns BLOCK_M rows of q, sweeps all column
blocks of k computing logit tiles with tl.dot (fp32 accumulation), keeps an online (running max / running sum)
logsumexp per row in fp32, picks the diagonal (target) logit when its block passes, and atomically adds
sum(logsumexp - target) / N of its rows into the fp32 output.

Known problems:
- ModelNew.forward launch: fixed BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, num_warps=4, default num_stages; no autotuning. With N=4096 and BLOCK_M=64 the grid is only 64 programs, fewer than the SMs on an H100/H200, so most of the GPU idles (no split over the column dimension).
- _infonce_row_kernel inner K loop: the q row tile (BLOCK_M x D, D=256) is re-loaded from memory for every column block instead of being loaded once and kept in registers/shared memory across the column sweep.
- _infonce_row_kernel target pick: the diagonal logit is extracted with a full (BLOCK_M, BLOCK_N) tl.where + tl.sum on every column block, although only the one block containing the diagonal matters.
- _infonce_row_kernel online logsumexp: uses tl.exp / tl.log (natural base) with the 1/temperature multiply applied to every tile, instead of folding log2(e)/temperature into one scale and using exp2/log2.
- _infonce_row_kernel reduction: the mean is done with one fp32 tl.atomic_add per program into a single scalar (order-nondeterministic summation; contention is small with 64 programs).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
import math

N_SAMPLES = 4096
DIM = 256
TEMPERATURE = 0.07


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, q, k):
        logits = torch.matmul(q, k.t()) / self.temperature
        labels = torch.arange(q.shape[0], device=q.device)
        return F.cross_entropy(logits.float(), labels)


@triton.jit
def _infonce_row_kernel(
    q_ptr, k_ptr, out_ptr,
    N, D, inv_temp, inv_n,
    stride_qn, stride_qd,
    stride_kn, stride_kd,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < N
    offs_k = tl.arange(0, BLOCK_K)

    run_max = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    target = tl.zeros((BLOCK_M,), dtype=tl.float32)

    for n0 in range(0, N, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_mask = offs_n < N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, D, BLOCK_K):
            k_idx = k0 + offs_k
            k_mask = k_idx < D
            a = tl.load(q_ptr + offs_m[:, None] * stride_qn + k_idx[None, :] * stride_qd,
                        mask=m_mask[:, None] & k_mask[None, :], other=0.0)
            # (BLOCK_K, BLOCK_N) tile of k^T
            b = tl.load(k_ptr + k_idx[:, None] * stride_kd + offs_n[None, :] * stride_kn,
                        mask=k_mask[:, None] & n_mask[None, :], other=0.0)
            acc += tl.dot(a, b)
        logits = acc * inv_temp
        logits = tl.where(n_mask[None, :], logits, float("-inf"))

        # diagonal (label) logit
        is_diag = offs_n[None, :] == offs_m[:, None]
        target += tl.sum(tl.where(is_diag, logits, 0.0), axis=1)

        # online logsumexp
        blk_max = tl.max(logits, axis=1)
        new_max = tl.maximum(run_max, blk_max)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(logits - new_max[:, None]), axis=1)
        run_max = new_max

    lse = run_max + tl.log(run_sum)
    row_loss = tl.where(m_mask, lse - target, 0.0)
    tl.atomic_add(out_ptr, tl.sum(row_loss, axis=0) * inv_n)


class ModelNew(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, q, k):
        N, D = q.shape
        out = torch.zeros((1,), device=q.device, dtype=torch.float32)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64
        grid = (triton.cdiv(N, BLOCK_M),)
        _infonce_row_kernel[grid](
            q, k, out,
            N, D, 1.0 / self.temperature, 1.0 / N,
            q.stride(0), q.stride(1),
            k.stride(0), k.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            num_warps=4,
        )
        return out.reshape(())


def get_inputs():
    q = F.normalize(torch.randn(N_SAMPLES, DIM, dtype=torch.float32), dim=1).to(torch.float16)
    k = F.normalize(torch.randn(N_SAMPLES, DIM, dtype=torch.float32), dim=1).to(torch.float16)
    return [q, k]


def get_init_inputs():
    return [TEMPERATURE]


TEST_SHAPES = [
    {"N_SAMPLES": 256, "DIM": 128},
    {"N_SAMPLES": 150, "DIM": 100},
]
