"""Per-head L2 normalisation of q over the head dim.

Computes F.normalize(q, p=2, dim=-1, eps=1e-6), i.e. q / max(||q||_2, 1e-6) along D.
q: (B, S, H, D) bfloat16 -> output (B, S, H, D) bfloat16. Math in fp32.
Benchmark shape: B=4, S=4096, H=32, D=128 (~134 MB read + written).

Known problems:
- One fixed BLOCK_R=16 rows per program with a single warp count; not tuned for
  occupancy or memory-level parallelism on any particular GPU.
- Requires a contiguous input (wrapper calls .contiguous(), which copies if it is not).
- The whole head (D padded to a power of two) is held in registers; fine for D=128,
  wasteful for odd D such as 96 (padded to 128 with masked lanes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 4
S = 4096
H = 32
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q):
        return F.normalize(q, p=2.0, dim=-1, eps=1e-6)


@triton.jit
def _l2norm_rows_kernel(x_ptr, y_ptr, n_rows, d, eps,
                        BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    rmask = rows < n_rows
    cmask = cols < d
    mask = rmask[:, None] & cmask[None, :]
    offs = rows[:, None].to(tl.int64) * d + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    ss = tl.sum(x * x, axis=1)
    nrm = tl.maximum(tl.sqrt(ss), eps)
    y = x / nrm[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def l2norm_lastdim(q, eps=1e-6):
    q = q.contiguous()
    d = q.shape[-1]
    n_rows = q.numel() // d
    y = torch.empty_like(q)
    BLOCK_R = 16
    BLOCK_D = triton.next_power_of_2(d)
    grid = (triton.cdiv(n_rows, BLOCK_R),)
    _l2norm_rows_kernel[grid](q, y, n_rows, d, eps,
                              BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q):
        return l2norm_lastdim(q, 1e-6)


def get_inputs():
    q = torch.randn(B, S, H, D, dtype=torch.bfloat16)
    return [q]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "S": 37, "H": 3, "D": 128},
    {"B": 2, "S": 13, "H": 5, "D": 100},
    {"B": 1, "S": 129, "H": 2, "D": 64},
]
