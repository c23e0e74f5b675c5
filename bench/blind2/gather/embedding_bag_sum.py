"""out[b, :] = sum_{j in [offsets[b], offsets[b+1])} weight[idx[j], :]  (embedding_bag mode="sum"); weight (V, D) fp32, idx int64 (N,), offsets int64 (BAGS,), out (BAGS, D) fp32.

Each program handles one bag and one BLOCK_D-wide slice of the embedding dimension. The wrapper appends N to the
offsets so every bag has an explicit end. The program reads its bag's start/end, walks the bag's indices one at a
time, loads the selected weight-row slice and accumulates it in an fp32 register vector, then writes its slice of
the output row (empty bags write zeros).

Known problems:
- lines 33-36: the bag is walked one index at a time; every iteration is a dependent chain (scalar idx load, then the row-slice load), so a program has only one 512-byte row slice in flight and is latency-bound. Loading a block of indices and gathering a [BLOCK_J, BLOCK_D] tile per iteration would keep many rows in flight.
- lines 47-48: BLOCK_D = 128 splits every D = 256 row over 2 programs, and each of them re-reads the bag's offsets and indices; a whole-row block (next_power_of_2(D)) would halve index traffic and double the bytes in flight per program.
- lines 44-45: a host-to-device copy and a torch.cat launch on every call just to append N; the kernel could take N and treat the last bag specially.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_EMBEDDINGS = 100000
EMBED_DIM = 256
NUM_BAGS = 4096
NUM_INDICES = 131072


@triton.jit
def embedding_bag_sum_kernel(idx_ptr, offsets_ptr, weight_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    pid_d = tl.program_id(1)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for j in range(start, end):
        row = tl.load(idx_ptr + j)
        vals = tl.load(weight_ptr + row * D + cols, mask=mask, other=0.0)
        acc += vals
    tl.store(out_ptr + bag * D + cols, acc, mask=mask)


def embedding_bag_sum(idx, weight, offsets):
    n = idx.shape[0]
    num_bags = offsets.shape[0]
    D = weight.shape[1]
    end = torch.tensor([n], dtype=offsets.dtype, device=offsets.device)
    offsets_ext = torch.cat([offsets, end])
    out = torch.empty((num_bags, D), dtype=weight.dtype, device=weight.device)
    BLOCK_D = 128
    grid = (num_bags, triton.cdiv(D, BLOCK_D))
    embedding_bag_sum_kernel[grid](idx, offsets_ext, weight, out, D, BLOCK_D=BLOCK_D)
    return out


class Model(nn.Module):
    def __init__(self, num_embeddings, embed_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embed_dim))

    def forward(self, idx, offsets):
        return nn.functional.embedding_bag(idx, self.weight, offsets, mode="sum")


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, embed_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embed_dim))

    def forward(self, idx, offsets):
        return embedding_bag_sum(idx, self.weight, offsets)


def get_inputs():
    idx = torch.randint(0, NUM_EMBEDDINGS, (NUM_INDICES,), dtype=torch.int64)
    cuts = torch.sort(torch.randint(0, NUM_INDICES, (NUM_BAGS - 1,), dtype=torch.int64)).values
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), cuts])
    return [idx, offsets]


def get_init_inputs():
    return [NUM_EMBEDDINGS, EMBED_DIM]


TEST_SHAPES = [
    {"NUM_EMBEDDINGS": 37, "EMBED_DIM": 71, "NUM_BAGS": 5, "NUM_INDICES": 129},
    {"NUM_EMBEDDINGS": 101, "EMBED_DIM": 200, "NUM_BAGS": 13, "NUM_INDICES": 257},
    {"NUM_EMBEDDINGS": 53, "EMBED_DIM": 129, "NUM_BAGS": 7, "NUM_INDICES": 71},
]
