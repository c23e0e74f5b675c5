"""A direct convolution with tl.dot per tap: loops over the taps around a loop over channel blocks, the weight read
from PyTorch's (C_out, C_in, KH, KW) layout (strided along both tile axes, 2 bytes a thread)."""

import triton
import triton.language as tl


@triton.jit
def conv_tap_loops(x_ptr, w_ptr, y_ptr, C, H, W, CO, KH: tl.constexpr, KW: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BC: tl.constexpr):
    pix = tl.program_id(0) * BM + tl.arange(0, BM)  # pixels of all images: image, row, column
    outs = tl.program_id(1) * BN + tl.arange(0, BN)
    img = pix // (H * W)
    oy = (pix // W) % H
    ox = pix % W
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ky in range(KH):
        for kx in range(KW):
            iy = oy + ky - KH // 2
            ix = ox + kx - KW // 2
            inside = (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
            x_row = x_ptr + img * (C * H * W) + iy * W + ix  # 1-D rows, then the channels across the tile
            for c0 in range(0, C, BC):
                chans = c0 + tl.arange(0, BC)
                a = tl.load(x_row[:, None] + chans[None, :] * (H * W),
                            mask=inside[:, None] & (chans[None, :] < C), other=0.0)
                b = tl.load(w_ptr + outs[None, :] * (C * KH * KW) + chans[:, None] * (KH * KW) + ky * KW + kx,
                            mask=(chans[:, None] < C) & (outs[None, :] < CO), other=0.0)
                acc += tl.dot(a, b)
    tl.store(y_ptr + (img * CO * H * W + oy * W + ox)[:, None] + outs[None, :] * (H * W), acc.to(tl.float16),
             mask=(oy[:, None] < H) & (outs[None, :] < CO))
