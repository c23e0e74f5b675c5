"""NLL loss with ignore_index, mean reduction over non-ignored targets.

loss = F.nll_loss(log_probs, target, ignore_index=-100)
log_probs: (N, C) fp32 (log_softmax of randn), target: (N,) int64 in [0, C) with ~10% set to -100.
Output: 0-dim fp32 = -sum(log_probs[i, target[i]] for non-ignored i) / count(non-ignored).

Known problems:
- lines 36-37: every program does two fp32 atomic_adds on the same two scalars (contention, and the sum order
  is nondeterministic); a per-program partials buffer + second pass would avoid both
- line 47: the final sum / count division is a separate torch op (extra launch)
- line 33: the gather reads one 4-byte element per row, scattered across rows (32 B sector per element);
  inherent to the op, but nothing is done to hide the latency besides many small programs
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 65536
C = 1024
IGNORE_INDEX = -100


@triton.jit
def _nll_kernel(lp_ptr, tgt_ptr, sum_ptr, cnt_ptr, n, c, ignore_index, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    row_mask = rows < n
    tgt = tl.load(tgt_ptr + rows, mask=row_mask, other=ignore_index)
    valid = row_mask & (tgt != ignore_index)
    safe_tgt = tl.where(valid, tgt, 0)
    lp = tl.load(lp_ptr + rows.to(tl.int64) * c + safe_tgt, mask=valid, other=0.0)
    part_sum = tl.sum(-lp, axis=0)
    part_cnt = tl.sum(valid.to(tl.float32), axis=0)
    tl.atomic_add(sum_ptr, part_sum)
    tl.atomic_add(cnt_ptr, part_cnt)


def nll_loss_ignore(log_probs, target, ignore_index=IGNORE_INDEX):
    log_probs = log_probs.contiguous()
    target = target.contiguous()
    n, c = log_probs.shape
    acc = torch.zeros((2,), dtype=torch.float32, device=log_probs.device)
    BLOCK = 1024
    _nll_kernel[(triton.cdiv(n, BLOCK),)](log_probs, target, acc[0:1], acc[1:2], n, c, ignore_index, BLOCK=BLOCK)
    return (acc[0] / acc[1]).to(log_probs.dtype)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_probs, target):
        return F.nll_loss(log_probs, target, ignore_index=IGNORE_INDEX)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_probs, target):
        return nll_loss_ignore(log_probs, target, IGNORE_INDEX)


def get_inputs():
    log_probs = torch.log_softmax(torch.randn(N, C, dtype=torch.float32), dim=1)
    target = torch.randint(0, C, (N,), dtype=torch.int64)
    target[torch.rand(N) < 0.1] = IGNORE_INDEX
    return [log_probs, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 1000, "C": 37},
    {"N": 2048, "C": 129},
]
