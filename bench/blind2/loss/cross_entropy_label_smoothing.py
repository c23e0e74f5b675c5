"""loss = mean_i[(1 - eps) * (lse_i - x[i, t_i]) + eps * (lse_i - mean_j x[i, j])]  (cross_entropy with label_smoothing=eps); logits (B, V) fp32, target int64 (B,), loss 0-d fp32.

One program per row. Pass 1 loops over the row in BLOCK_V chunks to find the row max; pass 2 loops again to
accumulate sum(exp(x - max)) and sum(x); the program then loads the target logit and writes the row's smoothed
loss. The wrapper takes the mean of the per-row losses with torch.

Known problems:
- lines 26-30: a separate max pass: every 128 KB logits row is read twice (this loop and the next); an online max / rescaled sum-exp in one loop would read it once.
- line 37: padding lanes are loaded as -inf and go through exp every iteration (harmless but wasted MUFU work), and the chunk loop has no prefetch of the next chunk.
- line 54: the mean is a separate torch launch over the per-row losses (minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 4096
VOCAB = 32000


@triton.jit
def ce_label_smoothing_kernel(logits_ptr, target_ptr, loss_ptr, V, smoothing, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * V
    m_vec = tl.full([BLOCK_V], float("-inf"), dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf"))
        m_vec = tl.maximum(m_vec, x)
    m = tl.max(m_vec, axis=0)
    s_vec = tl.zeros([BLOCK_V], dtype=tl.float32)
    sx_vec = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < V
        x = tl.load(row_ptr + cols, mask=mask, other=float("-inf"))
        s_vec += tl.exp(x - m)
        sx_vec += tl.where(mask, x, 0.0)
    lse = m + tl.log(tl.sum(s_vec, axis=0))
    t = tl.load(target_ptr + row)
    x_t = tl.load(row_ptr + t)
    nll = lse - x_t
    smooth = lse - tl.sum(sx_vec, axis=0) / V
    loss = (1.0 - smoothing) * nll + smoothing * smooth
    tl.store(loss_ptr + row, loss)


def cross_entropy_label_smoothing(logits, target, smoothing):
    B, V = logits.shape
    losses = torch.empty(B, dtype=torch.float32, device=logits.device)
    BLOCK_V = 1024
    grid = (B,)
    ce_label_smoothing_kernel[grid](logits, target, losses, V, smoothing, BLOCK_V=BLOCK_V)
    return losses.mean()


class Model(nn.Module):
    def __init__(self, label_smoothing):
        super().__init__()
        self.label_smoothing = label_smoothing

    def forward(self, logits, target):
        return nn.functional.cross_entropy(logits, target, label_smoothing=self.label_smoothing)


class ModelNew(nn.Module):
    def __init__(self, label_smoothing):
        super().__init__()
        self.label_smoothing = label_smoothing

    def forward(self, logits, target):
        return cross_entropy_label_smoothing(logits, target, self.label_smoothing)


def get_inputs():
    logits = torch.randn(BATCH, VOCAB)
    target = torch.randint(0, VOCAB, (BATCH,), dtype=torch.int64)
    return [logits, target]


def get_init_inputs():
    return [0.1]


TEST_SHAPES = [
    {"BATCH": 37, "VOCAB": 1029},
    {"BATCH": 13, "VOCAB": 3001},
    {"BATCH": 71, "VOCAB": 2053},
]
