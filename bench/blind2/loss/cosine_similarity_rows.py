"""loss = mean_i(1 - <a_i, b_i> / (max(|a_i|, eps) * max(|b_i|, eps)))  (1 - F.cosine_similarity(a, b, dim=1), then mean; eps = 1e-8); a, b (M, D) fp32, loss 0-d fp32.

One program per row. The program loops over the row in BLOCK_D chunks accumulating a*b, a*a and b*b in three fp32
register vectors, reduces them, and writes 1 - cos for the row. The wrapper takes the mean of the per-row values
with torch.

Known problems:
- lines 44-45: one row per program with BLOCK_D = 512 (4 fp32 per thread per iteration with 4 warps) and 4 serial iterations: little data in flight per program; a whole-row block or several rows per program would help.
- lines 35-37: three separate block reductions, each a shared-memory round trip plus barrier, at the end of every row.
- line 47: the mean is a separate torch launch and a round trip of the per-row buffer (minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 16384
DIM = 2048


@triton.jit
def cosine_distance_rows_kernel(a_ptr, b_ptr, out_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    dot = tl.zeros([BLOCK_D], dtype=tl.float32)
    na = tl.zeros([BLOCK_D], dtype=tl.float32)
    nb = tl.zeros([BLOCK_D], dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        cols = start + tl.arange(0, BLOCK_D)
        mask = cols < D
        a = tl.load(a_ptr + row * D + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + row * D + cols, mask=mask, other=0.0)
        dot += a * b
        na += a * a
        nb += b * b
    norm_a = tl.maximum(tl.sqrt(tl.sum(na, axis=0)), eps)
    norm_b = tl.maximum(tl.sqrt(tl.sum(nb, axis=0)), eps)
    cos = tl.sum(dot, axis=0) / (norm_a * norm_b)
    tl.store(out_ptr + row, 1.0 - cos)


def cosine_distance_mean(a, b, eps=1e-8):
    M, D = a.shape
    per_row = torch.empty(M, dtype=torch.float32, device=a.device)
    BLOCK_D = 512
    grid = (M,)
    cosine_distance_rows_kernel[grid](a, b, per_row, D, eps, BLOCK_D=BLOCK_D)
    return per_row.mean()


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return (1.0 - nn.functional.cosine_similarity(a, b, dim=1)).mean()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cosine_distance_mean(a, b)


def get_inputs():
    a = torch.randn(ROWS, DIM)
    b = torch.randn(ROWS, DIM)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 37, "DIM": 71},
    {"ROWS": 13, "DIM": 1029},
    {"ROWS": 71, "DIM": 600},
]
