"""Row scatter with amax: out = full((num_out, D), -inf).scatter_reduce(0, index[:, None].expand(-1, D), src,
reduce="amax", include_self=True), with src (N, D) fp32 and index (N,) int64 in [0, num_out).

out[index[i], d] = max(out[index[i], d], src[i, d]); rows that no index hits stay -inf.

Known problems:
- scatter_amax_rows_kernel: every src element does its own fp32 tl.atomic_max to global memory; with N = 262144 rows into 4096 output rows about 64 source rows hit each output row, so the same addresses are contended by many programs and no pre-reduction is done (e.g. sorting by index or reducing equal indices inside a tile before the atomics).
- scatter_amax_rows_kernel: fp32 atomic max is not a native instruction; Triton lowers it to a sign-split pair of integer atomics (or a CAS loop), so each element costs more than a plain atomic.
- fill_kernel (ModelNew.forward): a separate launch just to fill the output with -inf before the scatter launch.
- BLOCK_R = 16, BLOCK_D = next_power_of_2(D) and num_warps = 4 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_SRC = 262144
N_OUT = 4096
DIM = 128


class Model(nn.Module):
    def __init__(self, num_out):
        super().__init__()
        self.num_out = num_out

    def forward(self, src, index):
        out = torch.full((self.num_out, src.shape[1]), float("-inf"), dtype=src.dtype, device=src.device)
        return out.scatter_reduce(0, index[:, None].expand(-1, src.shape[1]), src,
                                  reduce="amax", include_self=True)


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    vals = tl.full([BLOCK], value, tl.float32)
    tl.store(out_ptr + offs, vals, mask=mask)


@triton.jit
def scatter_amax_rows_kernel(src_ptr, idx_ptr, out_ptr, N, D,
                             stride_src_n, stride_src_d, stride_out_n, stride_out_d,
                             BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < N
    idx = tl.load(idx_ptr + rows, mask=row_mask, other=0)
    for d0 in range(0, D, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        mask = row_mask[:, None] & (d[None, :] < D)
        vals = tl.load(src_ptr + rows[:, None].to(tl.int64) * stride_src_n + d[None, :] * stride_src_d,
                       mask=mask, other=float("-inf"))
        out_ptrs = out_ptr + idx[:, None].to(tl.int64) * stride_out_n + d[None, :] * stride_out_d
        tl.atomic_max(out_ptrs, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_out):
        super().__init__()
        self.num_out = num_out

    def forward(self, src, index):
        N, D = src.shape
        out = torch.empty((self.num_out, D), dtype=torch.float32, device=src.device)
        n = out.numel()
        FILL_BLOCK = 1024
        fill_kernel[(triton.cdiv(n, FILL_BLOCK),)](out, n, float("-inf"), BLOCK=FILL_BLOCK)
        BLOCK_R = 16
        BLOCK_D = min(triton.next_power_of_2(D), 128)
        grid = (triton.cdiv(N, BLOCK_R),)
        scatter_amax_rows_kernel[grid](src, index, out, N, D,
                                       src.stride(0), src.stride(1), out.stride(0), out.stride(1),
                                       BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=4)
        return out


def get_inputs():
    src = torch.randn(N_SRC, DIM, dtype=torch.float32)
    index = torch.randint(0, N_OUT, (N_SRC,), dtype=torch.int64)
    return [src, index]


def get_init_inputs():
    return [N_OUT]


# N_SRC >> N_OUT so that every output row is hit (an untouched row stays -inf, and -inf vs -inf
# would compare as inf - inf = nan in a plain abs-diff check); the benchmark shape hits every row too.
TEST_SHAPES = [
    {"N_SRC": 512, "N_OUT": 16, "DIM": 64},
    {"N_SRC": 2003, "N_OUT": 30, "DIM": 37},
    {"N_SRC": 1000, "N_OUT": 7, "DIM": 130},
]
