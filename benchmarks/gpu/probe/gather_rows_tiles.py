"""Row gather with a 2-D index (fp16).

out = table[idx] for table (NUM_ROWS, DIM) fp16 and idx (IDX0, IDX1) int64 with
values in [0, NUM_ROWS); out has shape (IDX0, IDX1, DIM) fp16.
Benchmark shape: table 131072 x 256, idx 64 x 512.

Known problems:
- L33-L34, L50-L51: one program per gathered row (32768 programs, 512 B each) with num_warps=4; far too little work per program to hide the latency of the dependent index->row load.
- L36-L38, L49: BLOCK_D = next_power_of_2(DIM) with a column mask on every load/store even when DIM is already a power of two.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_ROWS = 131072
DIM = 256
IDX0 = 64
IDX1 = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table, idx):
        return table[idx]


@triton.jit
def _gather_rows_kernel(table_ptr, idx_ptr, out_ptr, dim, stride_t, stride_o,
                        BLOCK_D: tl.constexpr, n_rows_total, ROWS: tl.constexpr):
    row_ids = tl.program_id(0) * ROWS + tl.arange(0, ROWS)  # ROWS rows per program
    row_ok = row_ids[:, None] < n_rows_total
    pid = row_ids[:, None]
    row = tl.load(idx_ptr + pid, mask=row_ok)
    cols = tl.arange(0, BLOCK_D)[None, :]
    mask = cols < dim
    vals = tl.load(table_ptr + row * stride_t + cols, mask=(mask) & row_ok, other=0.0)
    tl.store(out_ptr + pid.to(tl.int64) * stride_o + cols, vals, mask=(mask) & row_ok)


def gather_rows(table, idx):
    assert table.dim() == 2
    table = table.contiguous()
    idx_flat = idx.reshape(-1).contiguous()
    n_idx = idx_flat.numel()
    dim = table.shape[1]
    out = torch.empty((n_idx, dim), device=table.device, dtype=table.dtype)
    if n_idx > 0:
        BLOCK_D = triton.next_power_of_2(dim)
        rows_per_program = max(1, min(64, 8192 // triton.next_power_of_2(BLOCK_D)))
        _gather_rows_kernel[(triton.cdiv(n_idx, rows_per_program),)](table, idx_flat, out, dim, table.stride(0), out.stride(0),
                                      BLOCK_D=BLOCK_D, num_warps=4, n_rows_total=n_idx, ROWS=rows_per_program)
    return out.reshape(*idx.shape, dim)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table, idx):
        return gather_rows(table, idx)


def get_inputs():
    table = torch.randn(NUM_ROWS, DIM, dtype=torch.float16)
    idx = torch.randint(0, NUM_ROWS, (IDX0, IDX1), dtype=torch.int64)
    return [table, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"NUM_ROWS": 1024, "DIM": 256, "IDX0": 8, "IDX1": 16},
    {"NUM_ROWS": 129, "DIM": 37, "IDX0": 5, "IDX1": 13},
    {"NUM_ROWS": 500, "DIM": 200, "IDX0": 3, "IDX1": 129},
]
