"""EmbeddingBag mean: F.embedding_bag(idx, weight, mode="mean") with fixed-size bags.

idx is (N_BAGS, BAG_SIZE) int64 with values in [0, NUM_EMBEDDINGS); weight is the fp16
(NUM_EMBEDDINGS, EMBED_DIM) parameter of an nn.Embedding; output (N_BAGS, EMBED_DIM) fp16.
The Triton version runs one program per bag; it loops over the bag's indices, loads each
full weight row (EMBED_DIM padded to a power of two), sums in fp32, divides by the bag size.

Known problems:
- lines 44-46: the bag loop is sequential, and each iteration does a dependent scalar index load followed by one 1 KB row gather, so each program has about one row in flight (latency bound); no unrolling or batching of the bag's indices.
- lines 58-59: one program per bag with BLOCK_D = next_power_of_2(dim) and default num_warps, no tuning; 4096 small programs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_BAGS = 4096
BAG_SIZE = 32
NUM_EMBEDDINGS = 65536
EMBED_DIM = 512


class Model(nn.Module):
    def __init__(self, num_embeddings, embed_dim):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, embed_dim, dtype=torch.float16)

    def forward(self, idx):
        return F.embedding_bag(idx, self.emb.weight, mode="mean")


@triton.jit
def _embedding_bag_mean_kernel(
    idx_ptr, w_ptr, out_ptr,
    bag_size, dim,
    stride_idx, stride_w, stride_out,
    BLOCK_D: tl.constexpr,
):
    bag = tl.program_id(0)
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < dim
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for j in range(0, bag_size):
        row = tl.load(idx_ptr + bag * stride_idx + j)
        v = tl.load(w_ptr + row * stride_w + offs_d, mask=mask_d, other=0.0)
        acc += v.to(tl.float32)
    acc = acc / bag_size
    tl.store(out_ptr + bag * stride_out + offs_d, acc.to(tl.float16), mask=mask_d)


def embedding_bag_mean(idx, weight):
    idx = idx.contiguous()
    weight = weight.contiguous()
    n_bags, bag_size = idx.shape
    dim = weight.shape[1]
    out = torch.empty((n_bags, dim), device=idx.device, dtype=weight.dtype)
    BLOCK_D = triton.next_power_of_2(dim)
    _embedding_bag_mean_kernel[(n_bags,)](
        idx, weight, out,
        bag_size, dim,
        idx.stride(0), weight.stride(0), out.stride(0),
        BLOCK_D=BLOCK_D,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, embed_dim):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, embed_dim, dtype=torch.float16)

    def forward(self, idx):
        return embedding_bag_mean(idx, self.emb.weight)


def get_inputs():
    return [torch.randint(0, NUM_EMBEDDINGS, (N_BAGS, BAG_SIZE), dtype=torch.int64)]


def get_init_inputs():
    return [NUM_EMBEDDINGS, EMBED_DIM]


TEST_SHAPES = [
    {"N_BAGS": 64, "BAG_SIZE": 8, "NUM_EMBEDDINGS": 1024, "EMBED_DIM": 128},
    {"N_BAGS": 37, "BAG_SIZE": 5, "NUM_EMBEDDINGS": 777, "EMBED_DIM": 129},
]
