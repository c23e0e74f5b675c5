"""x.amin(dim=(1, 3)) of a 4-D fp16 tensor x (B, C, H, W); output fp16 (B, H).

out[b, h] = min over c, w of x[b, c, h, w].

Known problems:
- amin_dims_1_3_kernel grid (ModelNew.forward, `grid = (B * H,)`): one program per output element, so each program produces a single fp16 value and reads C strided segments of W contiguous halves (96 * 2 = 192 bytes each) that are H * W elements apart; neighbouring h rows that share the same cache lines/pages are handled by different programs, and a program's loads are short, scattered bursts.
- amin_dims_1_3_kernel: BLOCK_W = next_power_of_2(W) = 128 for W = 96, so a quarter of every tile's lanes are masked off and do no work.
- amin_dims_1_3_kernel: the tile is upcast to fp32 before tl.min (`.to(tl.float32)`), which is not needed for a min.
- BLOCK_C = 16, BLOCK_W and num_warps = 4 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DIM_B = 32
DIM_C = 64
DIM_H = 128
DIM_W = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amin(dim=(1, 3))


@triton.jit
def amin_dims_1_3_kernel(x_ptr, out_ptr, C, H, W,
                         stride_b, stride_c, stride_h, stride_w,
                         BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // H
    h = pid % H
    base = x_ptr + b.to(tl.int64) * stride_b + h.to(tl.int64) * stride_h
    w = tl.arange(0, BLOCK_W)
    w_mask = w < W
    acc = tl.full([BLOCK_C, BLOCK_W], float("inf"), tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + tl.arange(0, BLOCK_C)
        mask = (c[:, None] < C) & w_mask[None, :]
        ptrs = base + c[:, None].to(tl.int64) * stride_c + w[None, :] * stride_w
        x = tl.load(ptrs, mask=mask, other=float("inf")).to(tl.float32)
        acc = tl.minimum(acc, x)
    m = tl.min(tl.min(acc, axis=1), axis=0)
    tl.store(out_ptr + pid, m.to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        B, C, H, W = x.shape
        out = torch.empty((B, H), dtype=x.dtype, device=x.device)
        BLOCK_C = 16
        BLOCK_W = triton.next_power_of_2(W)
        grid = (B * H,)
        amin_dims_1_3_kernel[grid](x, out, C, H, W,
                                   x.stride(0), x.stride(1), x.stride(2), x.stride(3),
                                   BLOCK_C=BLOCK_C, BLOCK_W=BLOCK_W, num_warps=4)
        return out


def get_inputs():
    x = torch.randn(DIM_B, DIM_C, DIM_H, DIM_W, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"DIM_B": 2, "DIM_C": 16, "DIM_H": 8, "DIM_W": 32},
    {"DIM_B": 3, "DIM_C": 19, "DIM_H": 5, "DIM_W": 23},
    {"DIM_B": 1, "DIM_C": 3, "DIM_H": 7, "DIM_W": 1},
]
