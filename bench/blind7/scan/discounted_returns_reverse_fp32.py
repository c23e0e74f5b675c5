"""Reverse discounted cumulative sum (discounted returns) over time, fp32.

For rewards r (B, T) float32 and a python float gamma (the __init__ argument):
  G[:, T-1] = r[:, T-1]
  G[:, t]   = r[:, t] + gamma * G[:, t+1]
  out: G (B, T) float32

Known problems:
- Each program owns BLOCK_B rows and walks T serially; the per-step loads/stores touch one
  element per row with a stride of T elements, so every access is uncoalesced.
- Only cdiv(B, BLOCK_B) = 64 programs for the benchmark shape and a length-T dependent chain
  in each, so the GPU is under-occupied and latency bound (no parallel linear-recurrence scan).
- BLOCK_B=64 is a fixed guess.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 4096
T = 1024


class Model(nn.Module):
    def __init__(self, gamma):
        super().__init__()
        self.gamma = gamma

    def forward(self, r):
        G = torch.empty_like(r)
        g = torch.zeros_like(r[:, 0])
        for t in range(r.shape[1] - 1, -1, -1):
            g = r[:, t] + self.gamma * g
            G[:, t] = g
        return G


@triton.jit
def discounted_returns_kernel(r_ptr, out_ptr, Bn, Tn, gamma,
                              BLOCK_B: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    mask = rows < Bn
    row_off = rows.to(tl.int64) * Tn + (Tn - 1)
    r_ptrs = r_ptr + row_off
    o_ptrs = out_ptr + row_off
    g = tl.zeros([BLOCK_B], dtype=tl.float32)
    for i in range(0, Tn):
        v = tl.load(r_ptrs, mask=mask, other=0.0)
        g = v + gamma * g
        tl.store(o_ptrs, g, mask=mask)
        r_ptrs -= 1
        o_ptrs -= 1


def discounted_returns(r, gamma):
    r = r.contiguous()
    b, t = r.shape
    out = torch.empty_like(r)
    if r.numel() == 0:
        return out
    BLOCK_B = 64
    grid = (triton.cdiv(b, BLOCK_B),)
    discounted_returns_kernel[grid](r, out, b, t, float(gamma), BLOCK_B=BLOCK_B)
    return out


class ModelNew(nn.Module):
    def __init__(self, gamma):
        super().__init__()
        self.gamma = gamma

    def forward(self, r):
        return discounted_returns(r, self.gamma)


def get_inputs():
    r = torch.randn(B, T, dtype=torch.float32)
    return [r]


def get_init_inputs():
    return [0.99]


TEST_SHAPES = [
    {"B": 37, "T": 100},
    {"B": 129, "T": 50},
    {"B": 3, "T": 7},
]
