"""F.smooth_l1_loss(pred, target, beta=1.0, reduction="sum") with pred, target (M, N) bf16; output a bf16 scalar.

Per element, with d = pred - target: 0.5 * d^2 / beta if |d| < beta, else |d| - 0.5 * beta; the sum is
accumulated in fp32 and rounded to bf16 at the end.

Known problems:
- smooth_l1_sum_kernel: every program finishes with one tl.atomic_add on the same single fp32 address (`acc_ptr`), so with BLOCK = 4096 the M * N / BLOCK = 8192 atomics for the benchmark shape all serialize on one location (no two-stage / per-program partials reduction).
- ModelNew.forward: a separate torch.zeros for the fp32 accumulator and a separate cast launch (`acc.to(torch.bfloat16)`) after the kernel, i.e. three launches for one scalar.
- smooth_l1_sum_kernel: one tile per program (no persistent grid-stride loop), so 8192 programs each pay the launch/reduction/atomic overhead for only 16 KiB of input.
- BLOCK = 4096 and num_warps = 8 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M_ROWS = 8192
N_COLS = 4096
BETA = 1.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, beta=BETA, reduction="sum")


@triton.jit
def smooth_l1_sum_kernel(pred_ptr, target_ptr, acc_ptr, n, beta, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(pred_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(target_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = p - t
    ad = tl.abs(d)
    loss = tl.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    loss = tl.where(mask, loss, 0.0)
    s = tl.sum(loss, axis=0)
    tl.atomic_add(acc_ptr, s)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        pred = pred.contiguous()
        target = target.contiguous()
        n = pred.numel()
        acc = torch.zeros((), dtype=torch.float32, device=pred.device)
        BLOCK = 4096
        grid = (triton.cdiv(n, BLOCK),)
        smooth_l1_sum_kernel[grid](pred, target, acc, n, BETA, BLOCK=BLOCK, num_warps=8)
        return acc.to(pred.dtype)


def get_inputs():
    pred = torch.randn(M_ROWS, N_COLS, dtype=torch.bfloat16)
    target = torch.randn(M_ROWS, N_COLS, dtype=torch.bfloat16)
    return [pred, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M_ROWS": 64, "N_COLS": 128},
    {"M_ROWS": 37, "N_COLS": 301},
    {"M_ROWS": 1, "N_COLS": 5},
]
