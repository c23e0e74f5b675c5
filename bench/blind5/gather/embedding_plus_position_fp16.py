"""Token embedding plus learned position embedding, fp16.

Computes out = tok(ids) + pos(arange(S)) with two fp16 nn.Embedding tables
(tok: VOCAB x D, pos: MAX_POS x D) and ids of shape (B, S) int64; output (B, S, D) fp16.
Benchmark shape: B=32, S=1024, VOCAB=32000, MAX_POS=2048, D=1024.

Known problems:
- L38-L43: one program per (b, s) token copies a single 1024-wide row (2 KB) per table: 32768 small programs, each paying a dependent scalar id load before its row loads can start.
- L44-L44: the position row for s is re-read from global memory by every one of the B batch programs that share that s (B-fold redundant pos traffic, only partly saved by L2); processing all b for one s in one program would load it once.
- L43-L58: the rows are upcast to fp32 just for one add (extra converts), and the launch uses the default num_warps=4 for a 1024-wide fp16 row without any tuning.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
S = 1024
VOCAB = 32000
MAX_POS = 2048
D = 1024


class Model(nn.Module):
    def __init__(self, vocab, max_pos, d):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, dtype=torch.float16)
        self.pos = nn.Embedding(max_pos, d, dtype=torch.float16)

    def forward(self, ids):
        s = ids.shape[1]
        positions = torch.arange(s, device=ids.device)
        return self.tok(ids) + self.pos(positions)


@triton.jit
def embed_pos_kernel(ids_ptr, tok_ptr, pos_ptr, out_ptr, seq_len, d, BLOCK_D: tl.constexpr):
    tid = tl.program_id(0)
    s = tid % seq_len
    tok_id = tl.load(ids_ptr + tid).to(tl.int64)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < d
    t = tl.load(tok_ptr + tok_id * d + offs, mask=mask, other=0.0).to(tl.float32)
    p = tl.load(pos_ptr + s.to(tl.int64) * d + offs, mask=mask, other=0.0).to(tl.float32)
    y = t + p
    tl.store(out_ptr + tid.to(tl.int64) * d + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def embedding_plus_position(ids, tok_weight, pos_weight):
    ids = ids.contiguous()
    tok_weight = tok_weight.contiguous()
    pos_weight = pos_weight.contiguous()
    b, s = ids.shape
    d = tok_weight.shape[1]
    out = torch.empty((b, s, d), device=ids.device, dtype=tok_weight.dtype)
    BLOCK_D = triton.next_power_of_2(d)
    grid = (b * s,)
    embed_pos_kernel[grid](ids, tok_weight, pos_weight, out, s, d, BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self, vocab, max_pos, d):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, dtype=torch.float16)
        self.pos = nn.Embedding(max_pos, d, dtype=torch.float16)

    def forward(self, ids):
        return embedding_plus_position(ids, self.tok.weight, self.pos.weight)


def get_inputs():
    ids = torch.randint(0, VOCAB, (B, S), dtype=torch.int64)
    return [ids]


def get_init_inputs():
    return [VOCAB, MAX_POS, D]


TEST_SHAPES = [
    {"B": 2, "S": 16, "VOCAB": 100, "MAX_POS": 32, "D": 64},
    {"B": 3, "S": 37, "VOCAB": 129, "MAX_POS": 50, "D": 129},
    {"B": 1, "S": 5, "VOCAB": 7, "MAX_POS": 5, "D": 33},
]
