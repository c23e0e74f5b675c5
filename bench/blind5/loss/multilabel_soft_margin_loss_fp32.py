"""MultiLabelSoftMarginLoss (mean reduction).

loss = mean_n( -1/C * sum_c [ y*logsigmoid(x) + (1-y)*logsigmoid(-x) ] )
for logits x (N, C) fp32 and targets y (N, C) fp32 of 0/1. Output: 0-d fp32 tensor.
The per-element term is computed as logsigmoid(x) - (1-y)*x with a stable
logsigmoid(x) = min(x, 0) - log(1 + exp(-|x|)).

Benchmark shape: N=8192, C=1000 (fp32).

Known problems:
- L45-L58, L68: one program per row loops over C=1000 in BLOCK_C=256 chunks; 1000 is not a multiple of 256, so the last chunk wastes 24/256 lanes and the row is walked serially instead of loaded in one 1024-wide tile.
- L59: every one of the N=8192 programs does an fp32 atomic_add onto one single address, serializing at the end and making the sum order (and result bits) nondeterministic.
- L55: log(1 + exp(-|x|)) uses two transcendental calls per element with no log1p; fine for bandwidth here but not the cheapest form.
- L67: out must be zeroed with an extra torch.zeros launch before the kernel because of the atomic accumulation.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 8192
C = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MultiLabelSoftMarginLoss()

    def forward(self, logits, targets):
        return self.loss(logits, targets)


@triton.jit
def mlsm_loss_kernel(
    x_ptr,
    y_ptr,
    out_ptr,
    n_cols,
    stride_x,
    stride_y,
    inv_total,
    BLOCK_C: tl.constexpr,
):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    offs = tl.arange(0, BLOCK_C)
    for start in range(0, n_cols, BLOCK_C):
        cols = start + offs
        m = cols < n_cols
        x = tl.load(x_row + cols, mask=m, other=0.0)
        y = tl.load(y_row + cols, mask=m, other=0.0)
        ls = tl.minimum(x, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(x)))
        term = ls - (1.0 - y) * x
        acc += tl.where(m, term, 0.0)
    row_sum = tl.sum(acc, axis=0)
    tl.atomic_add(out_ptr, -row_sum * inv_total)


def multilabel_soft_margin_loss(logits, targets):
    assert logits.shape == targets.shape and logits.dim() == 2
    logits = logits.contiguous()
    targets = targets.contiguous()
    n, c = logits.shape
    out = torch.zeros((), device=logits.device, dtype=torch.float32)
    BLOCK_C = 256
    grid = (n,)
    mlsm_loss_kernel[grid](
        logits,
        targets,
        out,
        c,
        logits.stride(0),
        targets.stride(0),
        1.0 / (n * c),
        BLOCK_C=BLOCK_C,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return multilabel_soft_margin_loss(logits, targets)


def get_inputs():
    logits = torch.randn(N, C, dtype=torch.float32)
    targets = torch.randint(0, 2, (N, C)).to(torch.float32)
    return [logits, targets]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 37, "C": 129},
    {"N": 16, "C": 1000},
    {"N": 3, "C": 256},
]
