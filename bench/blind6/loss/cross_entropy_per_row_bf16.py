"""Per-row cross entropy, bf16.

logits: (N_ROWS, V) bf16; target: (N_ROWS,) int64.
loss = F.cross_entropy(logits, target, reduction='none'): (N_ROWS,) bf16,
loss[r] = logsumexp(logits[r]) - logits[r, target[r]] (0 where target == -100).
Benchmark shape: N_ROWS=4096, V=32000.

Known problems:
- line 48: the online update computes two exps per element (rescale and new term) plus a select, using tl.exp rather than exp2; compute-heavy for a bandwidth-bound kernel
- lines 68-70: BLOCK_V=1024 with default num_warps=4, not tuned, one program per row
- line 58: the target logit is re-read with a separate scalar load after the loop (minor)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 4096
V = 32000
IGNORE_INDEX = -100


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, reduction="none")


@triton.jit
def ce_per_row_kernel(logits_ptr, target_ptr, loss_ptr,
                      NV, stride_row, ignore_index,
                      BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    offs = tl.arange(0, BLOCK_V)

    # online logsumexp, one running (max, sum) per lane
    m = tl.full((BLOCK_V,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_V,), dtype=tl.float32)
    for v0 in range(0, NV, BLOCK_V):
        cols = v0 + offs
        x = tl.load(row_ptr + cols, mask=cols < NV, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have only seen -inf keep s = 0
        s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new

    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    lse = row_max + tl.log(total)

    tgt = tl.load(target_ptr + row)
    valid = tgt != ignore_index
    safe_tgt = tl.where(valid, tgt, 0)
    x_t = tl.load(row_ptr + safe_tgt).to(tl.float32)
    loss = tl.where(valid, lse - x_t, 0.0)
    tl.store(loss_ptr + row, loss.to(loss_ptr.dtype.element_ty))


def cross_entropy_per_row(logits, target):
    logits = logits.contiguous()
    target = target.contiguous()
    n, nv = logits.shape
    loss = torch.empty((n,), device=logits.device, dtype=logits.dtype)
    BLOCK_V = 1024
    ce_per_row_kernel[(n,)](logits, target, loss, nv, logits.stride(0), IGNORE_INDEX,
                            BLOCK_V=BLOCK_V)
    return loss


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return cross_entropy_per_row(logits, target)


def get_inputs():
    logits = torch.randn(N_ROWS, V, dtype=torch.bfloat16)
    target = torch.randint(0, V, (N_ROWS,), dtype=torch.int64)
    return [logits, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 8, "V": 2048},
    {"N_ROWS": 37, "V": 1000},
    {"N_ROWS": 5, "V": 3001},
]
