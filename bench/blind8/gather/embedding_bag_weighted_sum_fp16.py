"""Weighted-sum embedding bag: F.embedding_bag(indices, table, per_sample_weights=w, mode="sum") with a learned
fp16 table (num_embeddings, dim) (nn.Parameter), 2-D indices (bags, bag_size) int64 (each row is one bag) and
per-sample weights w (bags, bag_size) fp16; output fp16 (bags, dim).

out[b, :] = sum_j w[b, j] * table[indices[b, j], :]   (accumulated in fp32, stored as fp16)

Known problems:
- embedding_bag_weighted_sum_kernel grid (ModelNew.forward, `grid = (bags, triton.cdiv(D, BLOCK_D))`): with BLOCK_D = 128 and D = 512 each bag is split over 4 programs, each of which re-loads the same bag_size indices and weights, and each program only moves 128 * 2 = 256 bytes per table row.
- embedding_bag_weighted_sum_kernel loop over j: the bag entries are processed one at a time, and each iteration's table-row load depends on a scalar index load just before it, so the loop is latency-bound (index load -> row load -> FMA) with little memory-level parallelism per program; the indices/weights of the bag are not loaded up front as a vector.
- BLOCK_D = 128 and num_warps = 4 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

NUM_EMB = 50000
EMB_DIM = 512
N_BAGS = 4096
BAG_SIZE = 32


class Model(nn.Module):
    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, dim, dtype=torch.float16))

    def forward(self, indices, per_sample_weights):
        return F.embedding_bag(indices, self.weight, per_sample_weights=per_sample_weights, mode="sum")


@triton.jit
def embedding_bag_weighted_sum_kernel(idx_ptr, w_ptr, table_ptr, out_ptr, L, D,
                                      stride_idx_b, stride_idx_l, stride_w_b, stride_w_l,
                                      stride_t_n, stride_t_d, stride_o_b, stride_o_d,
                                      BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    pid_d = tl.program_id(1)
    d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = d < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for j in range(0, L):
        row = tl.load(idx_ptr + bag * stride_idx_b + j * stride_idx_l)
        wj = tl.load(w_ptr + bag * stride_w_b + j * stride_w_l).to(tl.float32)
        vals = tl.load(table_ptr + row.to(tl.int64) * stride_t_n + d * stride_t_d, mask=d_mask, other=0.0)
        acc += wj * vals.to(tl.float32)
    tl.store(out_ptr + bag * stride_o_b + d * stride_o_d, acc.to(out_ptr.dtype.element_ty), mask=d_mask)


class ModelNew(nn.Module):
    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, dim, dtype=torch.float16))

    def forward(self, indices, per_sample_weights):
        table = self.weight
        B, L = indices.shape
        D = table.shape[1]
        out = torch.empty((B, D), dtype=table.dtype, device=table.device)
        BLOCK_D = 128
        grid = (B, triton.cdiv(D, BLOCK_D))
        embedding_bag_weighted_sum_kernel[grid](
            indices, per_sample_weights, table, out, L, D,
            indices.stride(0), indices.stride(1),
            per_sample_weights.stride(0), per_sample_weights.stride(1),
            table.stride(0), table.stride(1), out.stride(0), out.stride(1),
            BLOCK_D=BLOCK_D, num_warps=4)
        return out


def get_inputs():
    indices = torch.randint(0, NUM_EMB, (N_BAGS, BAG_SIZE), dtype=torch.int64)
    w = torch.randn(N_BAGS, BAG_SIZE, dtype=torch.float16)
    return [indices, w]


def get_init_inputs():
    return [NUM_EMB, EMB_DIM]


TEST_SHAPES = [
    {"NUM_EMB": 1000, "EMB_DIM": 256, "N_BAGS": 64, "BAG_SIZE": 8},
    {"NUM_EMB": 333, "EMB_DIM": 77, "N_BAGS": 19, "BAG_SIZE": 5},
    {"NUM_EMB": 10, "EMB_DIM": 200, "N_BAGS": 7, "BAG_SIZE": 1},
]
