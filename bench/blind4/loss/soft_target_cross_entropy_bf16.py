"""Soft-target cross entropy: loss = mean over rows of -(target * log_softmax(logits, dim=-1)).sum(-1)
for logits, target (N_ROWS, N_COLS) bf16 (target rows are probability vectors), computed in fp32,
output a scalar fp32.

Known problems:
- line 61: one fp32 atomic_add per row onto a single address (8192 atomics serialized on one location; also makes the summation order non-deterministic).
- lines 50-51: online rescale evaluates two exp per element (alpha and p), doubling the transcendental work of a memory-bound pass.
- lines 40-43: four BLOCK-wide fp32 accumulators (m, s, st, stx) kept per program; at BLOCK=1024 with default num_warps=4 that is 32 live fp32 registers per thread just for state; not tuned.
- lines 70-71: BLOCK=1024 and one row per program fixed, no tuning of block size / num_warps.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        logp = torch.log_softmax(logits.float(), dim=-1)
        return -(target.float() * logp).sum(-1).mean()


@triton.jit
def soft_ce_kernel(logits_ptr, target_ptr, out_ptr, n_rows, n_cols,
                   stride_l, stride_t, BLOCK: tl.constexpr):
    # One program per row, single pass over the row with an online max / sum-exp, plus
    # sum(t) and sum(t * x). Row loss = (max + log(sum exp(x - max))) * sum(t) - sum(t * x).
    # The row losses are averaged into out_ptr[0] with an atomic add.
    row = tl.program_id(0)
    l_row = logits_ptr + row * stride_l
    t_row = target_ptr + row * stride_t
    offs = tl.arange(0, BLOCK)

    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    st = tl.zeros((BLOCK,), dtype=tl.float32)
    stx = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        mask = cols < n_cols
        x = tl.load(l_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        t = tl.load(t_row + cols, mask=mask, other=0.0).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        p = tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        s = s * alpha + p
        m = m_new
        st += t
        stx += tl.where(mask, t * x, 0.0)
    row_max = tl.max(m, axis=0)
    scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max))
    row_sum = tl.sum(s * scale, axis=0)
    lse = row_max + tl.log(row_sum)
    loss = lse * tl.sum(st, axis=0) - tl.sum(stx, axis=0)
    tl.atomic_add(out_ptr, loss / n_rows)


def soft_target_cross_entropy(logits, target):
    assert logits.shape == target.shape and logits.dim() == 2
    logits = logits.contiguous()
    target = target.contiguous()
    n_rows, n_cols = logits.shape
    out = torch.zeros((1,), device=logits.device, dtype=torch.float32)
    BLOCK = 1024
    grid = (n_rows,)
    soft_ce_kernel[grid](logits, target, out, n_rows, n_cols,
                         logits.stride(0), target.stride(0), BLOCK=BLOCK)
    return out[0]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return soft_target_cross_entropy(logits, target)


def get_inputs():
    logits = torch.randn(N_ROWS, N_COLS).to(torch.bfloat16)
    target = torch.softmax(torch.randn(N_ROWS, N_COLS), dim=-1).to(torch.bfloat16)
    return [logits, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 16, "N_COLS": 2048},
    {"N_ROWS": 37, "N_COLS": 1500},
    {"N_ROWS": 5, "N_COLS": 129},
]
