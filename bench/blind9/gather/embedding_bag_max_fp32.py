"""F.embedding_bag(indices, weight, offsets, mode='max') with an fp32 (V, D) weight table and NUM_BAGS bags.

Known problems:
- One program per (bag, D-block); the per-bag loop walks indices serially with one row load at a time.
- Variable bag lengths (1..MAX_BAG) cause load imbalance across programs.
- Fixed BLOCK_D, no autotune, no batching of several indices per iteration to hide gather latency.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

V = 100000
D = 256
NUM_BAGS = 4096
MAX_BAG = 64


def _make_weight(num_embeddings, dim):
    g = torch.Generator().manual_seed(1234)
    return torch.randn(num_embeddings, dim, generator=g, dtype=torch.float32)


class Model(nn.Module):
    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.register_buffer("weight", _make_weight(num_embeddings, dim))

    def forward(self, indices, offsets):
        return F.embedding_bag(indices, self.weight, offsets, mode="max")


@triton.jit
def _bag_max_kernel(idx_ptr, off_ptr, w_ptr, out_ptr, num_bags, total, D, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    cmask = cols < D
    start = tl.load(off_ptr + bag)
    if bag + 1 < num_bags:
        end = tl.load(off_ptr + bag + 1)
    else:
        end = total
    acc = tl.full((BLOCK_D,), float("-inf"), tl.float32)
    for j in range(start, end):
        row = tl.load(idx_ptr + j)
        v = tl.load(w_ptr + row * D + cols, mask=cmask, other=float("-inf"))
        acc = tl.maximum(acc, v)
    tl.store(out_ptr + bag.to(tl.int64) * D + cols, acc, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.register_buffer("weight", _make_weight(num_embeddings, dim))

    def forward(self, indices, offsets):
        w = self.weight.contiguous()
        indices = indices.contiguous()
        offsets = offsets.contiguous()
        num_bags = offsets.shape[0]
        d = w.shape[1]
        out = torch.empty((num_bags, d), dtype=w.dtype, device=w.device)
        BLOCK_D = 256
        grid = (num_bags, triton.cdiv(d, BLOCK_D))
        _bag_max_kernel[grid](indices, offsets, w, out, num_bags, indices.shape[0], d, BLOCK_D=BLOCK_D)
        return out


def get_inputs():
    lengths = torch.randint(1, MAX_BAG + 1, (NUM_BAGS,), dtype=torch.int64)
    offsets = torch.zeros(NUM_BAGS, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)[:-1]
    total = int(lengths.sum())
    indices = torch.randint(0, V, (total,), dtype=torch.int64)
    return [indices, offsets]


def get_init_inputs():
    return [V, D]


TEST_SHAPES = [
    {"V": 100, "D": 32, "NUM_BAGS": 5, "MAX_BAG": 4},
    {"V": 500, "D": 300, "NUM_BAGS": 17, "MAX_BAG": 9},
    {"V": 257, "D": 70, "NUM_BAGS": 11, "MAX_BAG": 7},
]
