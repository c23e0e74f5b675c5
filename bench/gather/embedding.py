"""Embedding lookup: out[t, :] = weight[ids[t], :] for (T,) int64 ids and a (V, D) fp32 table.

Known problems:
- line 22: one program per token with a scalar id load; each program moves only D elements
- lines 24, 44: BLOCK_SIZE=64: a loop of many tiny vectors per row
- lines 22, 25: token and column offsets widened to int64
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

T = 16384
V = 32000
D = 1024
TEST_SHAPES = [{"T": 32, "V": 50, "D": 128}, {"T": 13, "V": 17, "D": 100}]


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, dim, BLOCK_SIZE: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    idx = tl.load(ids_ptr + token)
    for start in range(0, dim, BLOCK_SIZE):
        cols = (start + tl.arange(0, BLOCK_SIZE)).to(tl.int64)
        mask = cols < dim
        row = tl.load(weight_ptr + idx * dim + cols, mask=mask)
        tl.store(out_ptr + token * dim + cols, row, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.weight = nn.Parameter(torch.randn(V, D))

    def forward(self, ids):
        return torch.nn.functional.embedding(ids, self.weight)


class ModelNew(Model):
    def forward(self, ids):
        out = torch.empty(ids.shape[0], self.weight.shape[1], dtype=self.weight.dtype, device=ids.device)
        embedding_kernel[(ids.shape[0],)](ids, self.weight, out, self.weight.shape[1], BLOCK_SIZE=64)
        return out


def get_inputs():
    return [torch.randint(0, V, (T,))]


def get_init_inputs():
    return []
