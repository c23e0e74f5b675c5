"""3-D convolution, 3x3x3 kernel, padding 1, stride 1, no bias.

Computes
    y = F.conv3d(x, w, padding=1)

Shapes / dtypes:
    x: (N, CIN, D, H, W) fp16, w: (COUT, CIN, 3, 3, 3) fp16 -> y: (N, COUT, D, H, W) fp16
    benchmark: N=2, CIN=COUT=32, D=H=W=32  (~3.6 GFLOP)

Implemented as an implicit GEMM: rows = output voxels (N*D*H*W), columns = COUT,
reduction = 27 taps x CIN, fp32 accumulation via tl.dot.

Known problems:
- The input is NCDHW, so an activation tile [voxels, channels] is a strided gather
  (channel stride D*H*W); loads are coalesced only along W, and every one of the 27
  taps re-gathers an overlapping tile from global memory (no shared-memory halo reuse).
- The weight tile is also gathered with stride 27 along CIN instead of being
  pre-packed into a K-major layout once.
- With CIN=32 each tap is a single small dot (K=32), so the tensor cores are fed by
  27 tiny MMAs with address math and masking in between; no pipelining/tuning of
  BLOCK_M/BLOCK_N/num_stages.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 2
CIN = 32
COUT = 32
D = 32
H = 32
W = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return F.conv3d(x, w, padding=1)


@triton.jit
def _conv3d_3x3x3_kernel(
    x_ptr, w_ptr, y_ptr,
    NB, CI, CO, DD, HH, WW,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    HW = HH * WW
    DHW = DD * HW
    total_m = NB * DHW

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < total_m
    n_mask = offs_n < CO

    nb = offs_m // DHW
    sp = offs_m % DHW
    od = sp // HW
    oh = (sp // WW) % HH
    ow = sp % WW
    x_batch_base = nb.to(tl.int64) * CI * DHW

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kd in tl.static_range(3):
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                id_ = od + (kd - 1)
                ih = oh + (kh - 1)
                iw = ow + (kw - 1)
                valid = m_mask & (id_ >= 0) & (id_ < DD) & (ih >= 0) & (ih < HH) \
                    & (iw >= 0) & (iw < WW)
                x_sp = x_batch_base + id_ * HW + ih * WW + iw
                tap = kd * 9 + kh * 3 + kw
                for c0 in range(0, CI, BLOCK_C):
                    offs_c = c0 + tl.arange(0, BLOCK_C)
                    c_mask = offs_c < CI
                    a_ptrs = x_ptr + x_sp[:, None] + offs_c[None, :].to(tl.int64) * DHW
                    a = tl.load(a_ptrs, mask=valid[:, None] & c_mask[None, :], other=0.0)
                    b_ptrs = w_ptr + offs_n[None, :] * (CI * 27) + offs_c[:, None] * 27 + tap
                    b = tl.load(b_ptrs, mask=c_mask[:, None] & n_mask[None, :], other=0.0)
                    acc = tl.dot(a, b, acc)

    y_off = (nb.to(tl.int64) * CO * DHW + sp)[:, None] + offs_n[None, :].to(tl.int64) * DHW
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def conv3d_3x3x3(x, w, BLOCK_M=64, BLOCK_N=32, BLOCK_C=32):
    x = x.contiguous()
    w = w.contiguous()
    nb, ci, dd, hh, ww = x.shape
    co = w.shape[0]
    y = torch.empty((nb, co, dd, hh, ww), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(nb * dd * hh * ww, BLOCK_M), triton.cdiv(co, BLOCK_N))
    _conv3d_3x3x3_kernel[grid](
        x, w, y, nb, ci, co, dd, hh, ww,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_C=BLOCK_C, num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return conv3d_3x3x3(x, w)


def get_inputs():
    x = torch.randn(N, CIN, D, H, W, dtype=torch.float16)
    scale = 1.0 / (CIN * 27) ** 0.5
    w = (torch.randn(COUT, CIN, 3, 3, 3) * scale).to(torch.float16)
    return [x, w]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 1, "CIN": 5, "COUT": 7, "D": 5, "H": 6, "W": 7},
    {"N": 2, "CIN": 37, "COUT": 33, "D": 4, "H": 5, "W": 3},
    {"N": 1, "CIN": 16, "COUT": 16, "D": 3, "H": 9, "W": 11},
]
