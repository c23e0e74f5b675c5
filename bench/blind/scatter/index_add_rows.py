"""Row index_add: out = zeros(NUM_BINS, D).index_add_(0, idx, src), fp32.

src is (R, D), idx is (R,) int64 with values in [0, NUM_BINS); out[idx[r], :] += src[r, :].

Known problems:
- line 42: one fp32 atomic per source element (16.7M atomics into a 1 MB output, about 64 source rows per bin hitting the same addresses), so the kernel is bound by L2 atomic throughput and contention, not bandwidth; rows with the same bin are not pre-aggregated inside a program (no sort / segmented reduction)
- line 49: the output is zeroed by a separate memset launch before the kernel (needed for the atomics, an extra pass over the output)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_BINS = 4096
R = 262144
D = 64


class Model(nn.Module):
    def __init__(self, num_bins=None):
        super().__init__()
        self.num_bins = NUM_BINS if num_bins is None else num_bins

    def forward(self, src, idx):
        out = torch.zeros(self.num_bins, src.shape[1], device=src.device, dtype=src.dtype)
        return out.index_add_(0, idx, src)


@triton.jit
def index_add_rows_kernel(src_ptr, idx_ptr, out_ptr, R, D,
                          stride_sr, stride_or,
                          BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_d = tl.program_id(1)
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = rows < R
    mask = row_mask[:, None] & (cols < D)[None, :]
    bins = tl.load(idx_ptr + rows, mask=row_mask, other=0)
    vals = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_sr + cols[None, :],
                   mask=mask, other=0.0)
    tl.atomic_add(out_ptr + bins[:, None] * stride_or + cols[None, :], vals, mask=mask)


def index_add_rows(src, idx, num_bins):
    r, d = src.shape
    src = src.contiguous()
    # index_add_ accumulates into zeros, so the output must start zeroed
    out = torch.zeros((num_bins, d), device=src.device, dtype=src.dtype)
    BLOCK_R = 32
    BLOCK_D = min(128, triton.next_power_of_2(d))
    grid = (triton.cdiv(r, BLOCK_R), triton.cdiv(d, BLOCK_D))
    index_add_rows_kernel[grid](src, idx, out, r, d, src.stride(0), out.stride(0),
                                BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self, num_bins=None):
        super().__init__()
        self.num_bins = NUM_BINS if num_bins is None else num_bins

    def forward(self, src, idx):
        return index_add_rows(src, idx, self.num_bins)


def get_inputs():
    src = torch.randn(R, D)
    idx = torch.randint(0, NUM_BINS, (R,), dtype=torch.int64)
    return [src, idx]


def get_init_inputs():
    return [NUM_BINS]


TEST_SHAPES = [
    {"NUM_BINS": 16, "R": 256, "D": 64},
    {"NUM_BINS": 37, "R": 129, "D": 45},
]
