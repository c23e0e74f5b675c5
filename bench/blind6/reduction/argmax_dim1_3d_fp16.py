"""argmax over the middle dim of a 3D tensor.

x: (B, R, C) fp16 with B = 32, R = 1024, C = 512 -> x.argmax(dim=1), shape (B, C), int64.
Inputs are randn, so ties are practically absent (first occurrence is returned on ties).

Known problems:
- lines 63-64: only cdiv(512, 64) x 32 = 256 programs, each streaming its 1024x64 strip serially (about 2 per SM), too little memory-level parallelism to reach HBM bandwidth; R is not split across programs
- lines 49-51: small 32x64 fp16 tile per iteration (128 B per row segment, 4 KB per load) with 4 warps
- lines 50-55: an index-returning cross-thread reduction plus compare/select runs every iteration instead of an elementwise running max/index kept per lane and reduced once at the end
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
R = 1024
C = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.argmax(dim=1)


@triton.jit
def argmax_dim1_kernel(
    x_ptr, out_ptr,
    n_red, n_cols,
    stride_xb, stride_xr, stride_xc,
    stride_ob, stride_oc,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid_c = tl.program_id(0)
    b = tl.program_id(1)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_r = tl.arange(0, BLOCK_R)
    c_mask = offs_c < n_cols

    best_val = tl.full((BLOCK_C,), float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros((BLOCK_C,), dtype=tl.int32)
    base = x_ptr + b * stride_xb
    for r0 in range(0, n_red, BLOCK_R):
        rows = r0 + offs_r
        mask = (rows[:, None] < n_red) & c_mask[None, :]
        x = tl.load(base + rows[:, None] * stride_xr + offs_c[None, :] * stride_xc,
                    mask=mask, other=float("-inf")).to(tl.float32)
        blk_val, blk_idx = tl.max(x, axis=0, return_indices=True, return_indices_tie_break_left=True)
        # strict '>' keeps the earlier block on ties -> first occurrence overall
        take = blk_val > best_val
        best_idx = tl.where(take, blk_idx + r0, best_idx)
        best_val = tl.where(take, blk_val, best_val)

    tl.store(out_ptr + b * stride_ob + offs_c * stride_oc, best_idx.to(tl.int64), mask=c_mask)


def argmax_dim1(x):
    Bx, Rx, Cx = x.shape
    out = torch.empty((Bx, Cx), device=x.device, dtype=torch.int64)
    BLOCK_R, BLOCK_C = 32, 64
    grid = (triton.cdiv(Cx, BLOCK_C), Bx)
    argmax_dim1_kernel[grid](
        x, out, Rx, Cx,
        x.stride(0), x.stride(1), x.stride(2),
        out.stride(0), out.stride(1),
        BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C,
        num_warps=4,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return argmax_dim1(x)


def get_inputs():
    return [torch.randn(B, R, C, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "R": 64, "C": 128},
    {"B": 3, "R": 100, "C": 37},
    {"B": 1, "R": 129, "C": 70},
]
