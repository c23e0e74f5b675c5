"""Mean cross-entropy: F.cross_entropy(logits, target) with reduction='mean', fp32.

logits is (N, C), target is (N,) int64 in [0, C) (ignore_index=-100 rows are skipped as in torch);
loss = mean over non-ignored rows of logsumexp(logits[i]) - logits[i, target[i]].

Known problems:
- lines 37-42: every 1024-wide chunk does two cross-warp block reductions (tl.max, then tl.sum) plus a scalar rescale that the next chunk depends on: about 32 serial reduce-and-sync round trips per 32000-wide row; per-lane running max/sum vectors reduced once after the loop would avoid them
- lines 71, 72: one program per 128 KB row with BLOCK_C=1024 and the default 4 warps: 8 elements per thread per iteration and no pipelining of the next chunk's load, so memory latency is exposed on every chunk
- line 74: a second launch with a single CTA serially sums the N per-row losses (tiny at N=8192, but an extra launch and round trip through memory)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 8192
C = 32000
IGNORE_INDEX = -100


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return nn.functional.cross_entropy(logits, target)


@triton.jit
def cross_entropy_rows_kernel(logits_ptr, target_ptr, loss_ptr, valid_ptr, C, stride_n,
                              IGNORE: tl.constexpr, BLOCK_C: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_n
    # online logsumexp over the row, one BLOCK_C chunk at a time
    m = tl.full((), float("-inf"), dtype=tl.float32)
    s = tl.zeros((), dtype=tl.float32)
    for start in range(0, C, BLOCK_C):
        offs = start + tl.arange(0, BLOCK_C)
        x = tl.load(row_ptr + offs, mask=offs < C, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)
    tgt = tl.load(target_ptr + row)
    valid = tgt != IGNORE
    safe_tgt = tl.where(valid, tgt, 0)
    x_t = tl.load(row_ptr + safe_tgt)
    loss = tl.where(valid, lse - x_t, 0.0)
    tl.store(loss_ptr + row, loss)
    tl.store(valid_ptr + row, valid.to(tl.float32))


@triton.jit
def mean_of_valid_kernel(loss_ptr, valid_ptr, out_ptr, N, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    cnt = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < N
        acc += tl.load(loss_ptr + offs, mask=mask, other=0.0)
        cnt += tl.load(valid_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / tl.sum(cnt, axis=0))


def cross_entropy_mean(logits, target):
    logits = logits.contiguous()
    n, c = logits.shape
    row_loss = torch.empty((n,), device=logits.device, dtype=torch.float32)
    row_valid = torch.empty((n,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=torch.float32)
    BLOCK_C = 1024
    cross_entropy_rows_kernel[(n,)](logits, target, row_loss, row_valid, c, logits.stride(0),
                                    IGNORE=IGNORE_INDEX, BLOCK_C=BLOCK_C)
    mean_of_valid_kernel[(1,)](row_loss, row_valid, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return cross_entropy_mean(logits, target)


def get_inputs():
    logits = torch.randn(N, C)
    target = torch.randint(0, C, (N,), dtype=torch.int64)
    return [logits, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 16, "C": 2048},
    {"N": 37, "C": 1500},
    {"N": 129, "C": 129},
]
