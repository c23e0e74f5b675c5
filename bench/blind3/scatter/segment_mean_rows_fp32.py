"""Segment mean of rows (scatter_reduce "mean", include_self=False).

out = zeros(S, D).scatter_reduce(0, idx[:, None].expand(-1, D), src, "mean", include_self=False)
src: (N_ROWS, D) fp32, idx: (N_ROWS,) int64 random in [0, S), out: (S, D) fp32.
Segments that receive no row stay 0.

Known problems:
- line 39: one global fp32 atomic_add per source element (N_ROWS * D atomics) instead of a sort-based
  segmented reduction; rows of the same segment contend on the same addresses
- line 43: counts are accumulated with a separate atomic per row (only the pid_d == 0 column of programs)
- lines 61-62, 69: sums/counts need a zero-initialised scratch buffer and a second full pass over (S, D) to divide
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 262144
D = 256
NUM_SEGMENTS = 4096


@triton.jit
def _segment_sum_kernel(src_ptr, idx_ptr, sum_ptr, cnt_ptr, n_rows, d,
                        BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_d = tl.program_id(1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = rows < n_rows
    col_mask = cols < d
    mask = row_mask[:, None] & col_mask[None, :]

    seg = tl.load(idx_ptr + rows, mask=row_mask, other=0)
    src_offs = rows.to(tl.int64)[:, None] * d + cols[None, :]
    vals = tl.load(src_ptr + src_offs, mask=mask, other=0.0)

    dst_offs = seg.to(tl.int64)[:, None] * d + cols[None, :]
    tl.atomic_add(sum_ptr + dst_offs, vals, mask=mask)

    if pid_d == 0:
        ones = tl.full((BLOCK_N,), 1.0, dtype=tl.float32)
        tl.atomic_add(cnt_ptr + seg, ones, mask=row_mask)


@triton.jit
def _segment_div_kernel(sum_ptr, cnt_ptr, out_ptr, n_seg, d, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_seg * d
    s = tl.load(sum_ptr + offs, mask=mask, other=0.0)
    c = tl.load(cnt_ptr + offs // d, mask=mask, other=1.0)
    out = tl.where(c > 0, s / tl.maximum(c, 1.0), 0.0)
    tl.store(out_ptr + offs, out, mask=mask)


def segment_mean(src, idx, num_segments):
    src = src.contiguous()
    idx = idx.contiguous()
    n_rows, d = src.shape
    sums = torch.zeros((num_segments, d), dtype=torch.float32, device=src.device)
    cnts = torch.zeros((num_segments,), dtype=torch.float32, device=src.device)
    BLOCK_N = 16
    BLOCK_D = min(256, triton.next_power_of_2(d))
    grid = (triton.cdiv(n_rows, BLOCK_N), triton.cdiv(d, BLOCK_D))
    _segment_sum_kernel[grid](src, idx, sums, cnts, n_rows, d, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D)
    out = torch.empty((num_segments, d), dtype=src.dtype, device=src.device)
    BLOCK = 1024
    _segment_div_kernel[(triton.cdiv(num_segments * d, BLOCK),)](sums, cnts, out, num_segments, d, BLOCK=BLOCK)
    return out


class Model(nn.Module):
    def __init__(self, num_segments):
        super().__init__()
        self.num_segments = num_segments

    def forward(self, src, idx):
        out = torch.zeros((self.num_segments, src.shape[1]), dtype=src.dtype, device=src.device)
        return out.scatter_reduce(0, idx[:, None].expand(-1, src.shape[1]), src, "mean", include_self=False)


class ModelNew(nn.Module):
    def __init__(self, num_segments):
        super().__init__()
        self.num_segments = num_segments

    def forward(self, src, idx):
        return segment_mean(src, idx, self.num_segments)


def get_inputs():
    src = torch.randn(N_ROWS, D, dtype=torch.float32)
    idx = torch.randint(0, NUM_SEGMENTS, (N_ROWS,), dtype=torch.int64)
    return [src, idx]


def get_init_inputs():
    return [NUM_SEGMENTS]


TEST_SHAPES = [
    {"N_ROWS": 1000, "D": 37, "NUM_SEGMENTS": 129},
    {"N_ROWS": 512, "D": 64, "NUM_SEGMENTS": 16},
]
