"""Channel-wise normalization of a (B, C, L) fp32 tensor over dim 1 (the C axis), per (b, l) position.

mean[b, l] = mean_c x[b, c, l],  var[b, l] = mean_c (x[b, c, l] - mean[b, l])^2
out[b, c, l] = (x[b, c, l] - mean[b, l]) / sqrt(var[b, l] + eps) * weight[c] + bias[c],  eps = 1e-5,
weight and bias are parameters of shape (C,).

Known problems:
_ln_dim1_kernel: the whole C axis (BLOCK_C = next_power_of_2(C) = 256) times BLOCK_L = 32 columns is held in registers as one fp32 tile (8192 values over 4 warps = 64/thread, plus the centered copy), which risks register spills and limits occupancy; no loop over C chunks.
_ln_dim1_kernel: reductions are along axis 0 (the strided C axis), i.e. cross-thread/cross-warp reductions through shared memory, while only 32 contiguous fp32 (128 bytes) per row of the tile are loaded, giving short coalesced segments per channel.
ModelNew.forward: BLOCK_L = 32 and num_warps = 4 chosen by hand, no autotuning; grid = B * L / 32 = 2048 programs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 64
CHANNELS = 256
LENGTH = 1024
EPS = 1e-5


def _init_affine(weight, bias):
    c = weight.shape[0]
    idx = torch.arange(c, dtype=torch.float32)
    with torch.no_grad():
        weight.copy_(1.0 + 0.5 * torch.sin(idx * 0.37))
        bias.copy_(0.1 * torch.cos(idx * 0.11))


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, dtype=torch.float32))
        self.bias = nn.Parameter(torch.empty(channels, dtype=torch.float32))
        _init_affine(self.weight, self.bias)
        self.eps = EPS

    def forward(self, x):
        mean = x.mean(dim=1, keepdim=True)
        var = x.var(dim=1, unbiased=False, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return y * self.weight[None, :, None] + self.bias[None, :, None]


@triton.jit
def _ln_dim1_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, L, eps,
                    BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_l = tl.program_id(1)
    offs_c = tl.arange(0, BLOCK_C)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    c_mask = offs_c < C
    l_mask = offs_l < L
    mask = c_mask[:, None] & l_mask[None, :]
    offs = pid_b * C * L + offs_c[:, None] * L + offs_l[None, :]

    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / C
    diff = tl.where(mask, x - mean[None, :], 0.0)
    var = tl.sum(diff * diff, axis=0) / C
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + offs_c, mask=c_mask, other=0.0)
    b = tl.load(b_ptr + offs_c, mask=c_mask, other=0.0)
    y = diff * rstd[None, :] * w[:, None] + b[:, None]
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, dtype=torch.float32))
        self.bias = nn.Parameter(torch.empty(channels, dtype=torch.float32))
        _init_affine(self.weight, self.bias)
        self.eps = EPS

    def forward(self, x):
        x = x.contiguous()
        B, C, L = x.shape
        out = torch.empty_like(x)
        BLOCK_C = triton.next_power_of_2(C)
        BLOCK_L = 32
        grid = (B, triton.cdiv(L, BLOCK_L))
        _ln_dim1_kernel[grid](
            x, self.weight, self.bias, out, C, L, self.eps,
            BLOCK_C=BLOCK_C, BLOCK_L=BLOCK_L, num_warps=4,
        )
        return out


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH, dtype=torch.float32)]


def get_init_inputs():
    return [CHANNELS]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 16, "LENGTH": 64},
    {"BATCH": 3, "CHANNELS": 37, "LENGTH": 45},
    {"BATCH": 2, "CHANNELS": 256, "LENGTH": 33},
]
