"""Triplet margin loss: F.triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2), mean reduction.

anchor, positive, negative are (N_ROWS, DIM) fp32; d(x, y) = ||x - y + eps||_2 with eps = 1e-6 (as in
F.pairwise_distance); loss = mean(max(d(a, p) - d(a, n) + margin, 0)); output is a 0-dim fp32 tensor.

Known problems:
- L47: all 16384 programs atomically add into one scalar: serialized contention on a single address
  (and a non-deterministic summation order); a per-row buffer plus a tree reduction, or one program
  handling many rows, would avoid it.
- L57-59: one 512-wide row per program at default num_warps; tiny programs with little work each.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 16384
DIM = 512
MARGIN = 1.0
EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=MARGIN, p=2)


@triton.jit
def triplet_loss_kernel(a_ptr, p_ptr, n_ptr, out_ptr, D, stride_a, stride_p, stride_n,
                        margin, eps, inv_rows, BLOCK_D: tl.constexpr):
    # one program per row; the per-row loss / N_ROWS is atomically added into the scalar output
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    a = tl.load(a_ptr + row * stride_a + offs, mask=mask, other=0.0)
    p = tl.load(p_ptr + row * stride_p + offs, mask=mask, other=0.0)
    n = tl.load(n_ptr + row * stride_n + offs, mask=mask, other=0.0)
    dp = tl.where(mask, a - p + eps, 0.0)
    dn = tl.where(mask, a - n + eps, 0.0)
    d_ap = tl.sqrt(tl.sum(dp * dp, axis=0))
    d_an = tl.sqrt(tl.sum(dn * dn, axis=0))
    loss = tl.maximum(d_ap - d_an + margin, 0.0)
    tl.atomic_add(out_ptr, loss * inv_rows)


def triplet_margin_loss(anchor, positive, negative, margin=MARGIN, eps=EPS):
    anchor = anchor.contiguous()
    positive = positive.contiguous()
    negative = negative.contiguous()
    rows, d = anchor.shape
    out = torch.zeros((), dtype=torch.float32, device=anchor.device)
    BLOCK_D = triton.next_power_of_2(d)
    triplet_loss_kernel[(rows,)](anchor, positive, negative, out, d,
                                 anchor.stride(0), positive.stride(0), negative.stride(0),
                                 margin, eps, 1.0 / rows, BLOCK_D=BLOCK_D)
    return out.to(anchor.dtype)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, anchor, positive, negative):
        return triplet_margin_loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.randn(N_ROWS, DIM)
    positive = torch.randn(N_ROWS, DIM)
    negative = torch.randn(N_ROWS, DIM)
    return [anchor, positive, negative]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "DIM": 129},
    {"N_ROWS": 64, "DIM": 512},
    {"N_ROWS": 100, "DIM": 33},
]
