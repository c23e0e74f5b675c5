"""Softmax over the middle axis of a 3D tensor: torch.softmax(x, dim=1).

x is (BATCH, DIM1, DIM2) fp16, reduction over DIM1; output fp16 (computed in fp32).

Known problems:
- L54: BLOCK_C = 16 fp16 columns means each of the 512 strided rows of a tile is only a 32-byte segment
  (L38-39, L45): short, poorly coalesced accesses; a wider column block (64-128) would use full lines.
- L53, L39-44: the whole reduction axis (512 x 16 tile in fp32) is held in registers at default
  num_warps, with no tuning of num_warps/BLOCK_C.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
DIM1 = 512
DIM2 = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


@triton.jit
def softmax_dim1_kernel(x_ptr, y_ptr, R, C, stride_b, stride_r, stride_c,
                        BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # one program per (batch, block of BLOCK_C columns); it holds all R rows of those columns
    pid_c = tl.program_id(0)
    pid_b = tl.program_id(1)
    offs_r = tl.arange(0, BLOCK_R)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (offs_r[:, None] < R) & (offs_c[None, :] < C)
    offs = pid_b.to(tl.int64) * stride_b + offs_r[:, None] * stride_r + offs_c[None, :] * stride_c
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    e = tl.exp(x - x_max[None, :])
    e = tl.where(mask, e, 0.0)
    denom = tl.sum(e, axis=0)
    y = e / denom[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_dim1(x):
    assert x.dim() == 3
    x = x.contiguous()
    b, r, c = x.shape
    y = torch.empty_like(x)
    BLOCK_R = triton.next_power_of_2(r)
    BLOCK_C = 16
    grid = (triton.cdiv(c, BLOCK_C), b)
    softmax_dim1_kernel[grid](x, y, r, c, x.stride(0), x.stride(1), x.stride(2),
                              BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_dim1(x)


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "DIM1": 37, "DIM2": 129},
    {"BATCH": 2, "DIM1": 64, "DIM2": 64},
    {"BATCH": 4, "DIM1": 100, "DIM2": 33},
]
