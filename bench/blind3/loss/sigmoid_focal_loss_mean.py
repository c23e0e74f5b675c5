"""Sigmoid focal loss, mean over all elements (alpha=0.25, gamma=2).

p = sigmoid(x); ce = BCE_with_logits(x, t); p_t = p*t + (1-p)*(1-t)
loss = mean( (alpha*t + (1-alpha)*(1-t)) * ce * (1 - p_t)**gamma )
x: (N_ROWS, N_COLS) fp32 logits, t: (N_ROWS, N_COLS) fp32 0/1 targets; output 0-dim fp32.

Known problems:
- line 41: every program does an fp32 atomic_add into one scalar (N/BLOCK atomics on one address,
  nondeterministic order); a partials buffer + second pass or a persistent grid would avoid it
- line 51: the final divide by numel is a separate torch op (extra launch)
- lines 32-33: exp is computed twice per element (once for sigmoid, once for the log1p term) instead of reusing exp(-|x|)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 1024
ALPHA = 0.25
GAMMA = 2.0


@triton.jit
def _focal_kernel(x_ptr, t_ptr, sum_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    p = 1.0 / (1.0 + tl.exp(-x))
    ce = tl.maximum(x, 0.0) - x * t + tl.log(1.0 + tl.exp(-tl.abs(x)))
    p_t = p * t + (1.0 - p) * (1.0 - t)
    one_m = 1.0 - p_t
    loss = ce * one_m * one_m  # gamma = 2
    alpha_t = alpha * t + (1.0 - alpha) * (1.0 - t)
    loss = alpha_t * loss
    loss = tl.where(mask, loss, 0.0)
    part = tl.sum(loss, axis=0)
    tl.atomic_add(sum_ptr, part)


def sigmoid_focal_loss_mean(x, t, alpha=ALPHA):
    x = x.contiguous()
    t = t.contiguous()
    n = x.numel()
    acc = torch.zeros((1,), dtype=torch.float32, device=x.device)
    BLOCK = 1024
    _focal_kernel[(triton.cdiv(n, BLOCK),)](x, t, acc, n, alpha, BLOCK=BLOCK)
    return (acc[0] / n).to(x.dtype)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, t):
        p = torch.sigmoid(x)
        ce = F.binary_cross_entropy_with_logits(x, t, reduction="none")
        p_t = p * t + (1 - p) * (1 - t)
        loss = ce * ((1 - p_t) ** GAMMA)
        alpha_t = ALPHA * t + (1 - ALPHA) * (1 - t)
        loss = alpha_t * loss
        return loss.mean()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, t):
        return sigmoid_focal_loss_mean(x, t, ALPHA)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS, dtype=torch.float32)
    t = (torch.rand(N_ROWS, N_COLS) < 0.5).to(torch.float32)
    return [x, t]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 1000},
    {"N_ROWS": 64, "N_COLS": 129},
]
