"""Per-sample soft Dice loss (fp32), averaged over the batch.

  p = sigmoid(logits), t = 0/1 float target, both (N, C, H, W) float32
  dice_i = (2 * sum(p * t) + 1) / (sum(p) + sum(t) + 1)   over each sample's C*H*W
  loss = mean(1 - dice_i)   (0-dim scalar)

Known problems:
- One program per sample loops over all C*H*W elements, so only N (=32) programs run and
  most SMs are idle; the per-sample reduction is not split across programs.
- Three separate fp32 accumulator vectors are carried through the loop (registers), with
  a fixed BLOCK=1024 that is not tuned.
- The batch mean is a second, single-program kernel launch for N values.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C = 4
H = 256
W = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        p = torch.sigmoid(logits)
        dims = (1, 2, 3)
        inter = (p * target).sum(dim=dims)
        denom = p.sum(dim=dims) + target.sum(dim=dims)
        dice = (2.0 * inter + 1.0) / (denom + 1.0)
        return (1.0 - dice).mean()


@triton.jit
def dice_sample_kernel(x_ptr, t_ptr, dice_ptr, L, BLOCK: tl.constexpr):
    s = tl.program_id(0)
    base = s.to(tl.int64) * L
    acc_pt = tl.zeros([BLOCK], dtype=tl.float32)
    acc_p = tl.zeros([BLOCK], dtype=tl.float32)
    acc_t = tl.zeros([BLOCK], dtype=tl.float32)
    for l0 in range(0, L, BLOCK):
        offs = l0 + tl.arange(0, BLOCK)
        mask = offs < L
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        t = tl.load(t_ptr + base + offs, mask=mask, other=0.0)
        p = tl.where(mask, tl.sigmoid(x), 0.0)
        acc_pt += p * t
        acc_p += p
        acc_t += t
    inter = tl.sum(acc_pt, axis=0)
    sp = tl.sum(acc_p, axis=0)
    st = tl.sum(acc_t, axis=0)
    dice = (2.0 * inter + 1.0) / (sp + st + 1.0)
    tl.store(dice_ptr + s, dice)


@triton.jit
def one_minus_mean_kernel(d_ptr, out_ptr, Nn, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for n0 in range(0, Nn, BLOCK):
        offs = n0 + tl.arange(0, BLOCK)
        d = tl.load(d_ptr + offs, mask=offs < Nn, other=1.0)
        acc += 1.0 - d
    tl.store(out_ptr, tl.sum(acc, axis=0) / Nn)


def dice_loss(logits, target):
    logits = logits.contiguous()
    target = target.contiguous()
    n = logits.shape[0]
    L = logits.numel() // n
    dice = torch.empty((n,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=torch.float32)
    dice_sample_kernel[(n,)](logits, target, dice, L, BLOCK=1024)
    one_minus_mean_kernel[(1,)](dice, out, n, BLOCK=128)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return dice_loss(logits, target)


def get_inputs():
    logits = torch.randn(N, C, H, W, dtype=torch.float32)
    target = (torch.rand(N, C, H, W) > 0.5).to(torch.float32)
    return [logits, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 3, "C": 2, "H": 37, "W": 29},
    {"N": 5, "C": 1, "H": 100, "W": 129},
    {"N": 2, "C": 3, "H": 7, "W": 9},
]
