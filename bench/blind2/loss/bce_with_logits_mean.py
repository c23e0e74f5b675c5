"""loss = mean(max(x, 0) - x * y + log(1 + exp(-|x|)))  (binary_cross_entropy_with_logits, reduction="mean"); x, y (M, N) fp32, loss 0-d fp32.

The input is treated as a flat vector. One program per BLOCK elements computes the numerically stable per-element
loss, sums it with tl.sum and atomically adds the partial sum into a single fp32 accumulator; the wrapper divides
the accumulator by the element count.

Known problems:
- line 30: every one of the 32768 programs does an fp32 atomic onto the same address: the atomics serialize at one L2 slice (and the sum order is nondeterministic). Per-program partial sums plus a second-stage reduction, or far fewer programs, would avoid it.
- lines 36-37: BLOCK = 1024 gives 32768 programs, each paying a block-level reduction (shared memory + barrier) for only 1024 elements; a persistent / grid-stride loop accumulating in registers would amortize it.
- line 35: extra memset launch for the accumulator, and the division on line 39 is another launch; the 1/numel scale could be applied in-kernel.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 8192
COLS = 4096


@triton.jit
def bce_with_logits_sum_kernel(x_ptr, y_ptr, acc_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    loss = tl.maximum(x, 0.0) - x * y + tl.log(1.0 + tl.exp(-tl.abs(x)))
    loss = tl.where(mask, loss, 0.0)
    tl.atomic_add(acc_ptr, tl.sum(loss, axis=0))


def bce_with_logits_mean(x, y):
    numel = x.numel()
    acc = torch.zeros(1, dtype=torch.float32, device=x.device)
    BLOCK = 1024
    grid = (triton.cdiv(numel, BLOCK),)
    bce_with_logits_sum_kernel[grid](x, y, acc, numel, BLOCK=BLOCK)
    return acc[0] / numel


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return nn.functional.binary_cross_entropy_with_logits(x, y)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return bce_with_logits_mean(x, y)


def get_inputs():
    x = torch.randn(ROWS, COLS)
    y = torch.rand(ROWS, COLS)
    return [x, y]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 37, "COLS": 71},
    {"ROWS": 129, "COLS": 53},
    {"ROWS": 71, "COLS": 257},
]
