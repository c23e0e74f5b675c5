"""F.kl_div(input, target, reduction="batchmean", log_target=True) with input, target (B, K) fp32 log-probabilities
(log_softmax of random logits); output an fp32 scalar.

loss = sum over all elements of exp(target) * (target - input), divided by B (the batch size, dim 0).

Known problems:
- kl_div_log_target_kernel: every program ends with one tl.atomic_add on the same single fp32 address (`out_ptr`); with BLOCK = 2048 that is B * K / BLOCK = 8000 atomics serialized on one location for the benchmark shape (no two-stage partials reduction).
- kl_div_log_target_kernel: one tile per program (no persistent grid-stride loop), so each of the 8000 programs pays launch/reduction/atomic overhead for only 16 KiB of input.
- ModelNew.forward: a separate torch.zeros launch to clear the accumulator before the kernel.
- BLOCK = 2048 and num_warps = 8 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 16384
N_CLASSES = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input, target):
        return F.kl_div(input, target, reduction="batchmean", log_target=True)


@triton.jit
def kl_div_log_target_kernel(in_ptr, tgt_ptr, out_ptr, n, inv_b, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs, mask=mask, other=0.0)
    t = tl.load(tgt_ptr + offs, mask=mask, other=0.0)
    v = tl.exp(t) * (t - x)
    v = tl.where(mask, v, 0.0)
    s = tl.sum(v, axis=0)
    tl.atomic_add(out_ptr, s * inv_b)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input, target):
        input = input.contiguous()
        target = target.contiguous()
        n = input.numel()
        B = input.shape[0]
        out = torch.zeros((), dtype=torch.float32, device=input.device)
        BLOCK = 2048
        grid = (triton.cdiv(n, BLOCK),)
        kl_div_log_target_kernel[grid](input, target, out, n, 1.0 / B, BLOCK=BLOCK, num_warps=8)
        return out


def get_inputs():
    input = torch.log_softmax(torch.randn(BATCH, N_CLASSES, dtype=torch.float32), dim=1)
    target = torch.log_softmax(torch.randn(BATCH, N_CLASSES, dtype=torch.float32), dim=1)
    return [input, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 64, "N_CLASSES": 128},
    {"BATCH": 37, "N_CLASSES": 301},
    {"BATCH": 3, "N_CLASSES": 5},
]
