"""Row-wise first-order linear recurrence along the time axis.

h[:, 0] = b[:, 0]; h[:, t] = a[:, t] * h[:, t-1] + b[:, t]
a is (ROWS=1024, SEQ=4096) fp32 uniform in (0.5, 1), b is (ROWS, SEQ) fp32 randn; out h is (ROWS, SEQ) fp32.

Known problems:
- lines 45-49: strictly sequential loop over all 4096 time steps; each step's loads of a_t/b_t touch 32 different rows 16 KB apart (uncoalesced, one sector per value) and the loop is latency bound on global loads with no prefetch of later steps.
- lines 55-56: BLOCK_R=32 gives only 32 programs for ROWS=1024 on a 132-SM GPU, and a 32-element tensor under the default 4 warps leaves 3/4 of the threads doing duplicated work; a per-row (or row-block) chunked tl.associative_scan along time with a carried state would parallelize over t and read contiguously.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 1024
SEQ = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        h = torch.empty_like(b)
        prev = b[:, 0]
        h[:, 0] = prev
        for t in range(1, b.shape[1]):
            prev = a[:, t] * prev + b[:, t]
            h[:, t] = prev
        return h


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, h_ptr, n_rows, seq_len,
                             stride_ar, stride_at,
                             stride_br, stride_bt,
                             stride_hr, stride_ht,
                             BLOCK_R: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < n_rows
    # t = 0: h = b
    h = tl.load(b_ptr + rows * stride_br, mask=rmask, other=0.0)
    tl.store(h_ptr + rows * stride_hr, h, mask=rmask)
    for t in range(1, seq_len):
        a_t = tl.load(a_ptr + rows * stride_ar + t * stride_at, mask=rmask, other=0.0)
        b_t = tl.load(b_ptr + rows * stride_br + t * stride_bt, mask=rmask, other=0.0)
        h = a_t * h + b_t
        tl.store(h_ptr + rows * stride_hr + t * stride_ht, h, mask=rmask)


def triton_linear_recurrence(a, b):
    n_rows, seq_len = b.shape
    h = torch.empty((n_rows, seq_len), device=b.device, dtype=torch.float32)
    BLOCK_R = 32
    grid = (triton.cdiv(n_rows, BLOCK_R),)
    linear_recurrence_kernel[grid](
        a, b, h, n_rows, seq_len,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        h.stride(0), h.stride(1),
        BLOCK_R=BLOCK_R,
    )
    return h


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return triton_linear_recurrence(a, b)


def get_inputs():
    a = torch.rand(ROWS, SEQ, dtype=torch.float32) * 0.5 + 0.5
    b = torch.randn(ROWS, SEQ, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 64, "SEQ": 128},
    {"ROWS": 37, "SEQ": 100},
]
