"""Call the Triton operators of two public libraries never used here, so `tritonlens record` sees their launches.

Our own driver, not the libraries' code. It imports, from the carried sources on the path (see fetch_libs.sh):
ColossalAI's inference kernels (`colossalai.kernel.triton`: paged attention, KV-cache copies, rotary embeddings,
RMSNorm, softmax, SwiGLU) and AlibabaPAI FLASHNN's kernels (`flashnn.triton_kernels`: flash attention, paged
attention, int8/int4 GEMMs, fused MoE, norms with dynamic quantisation, rotary). Each operator is
called through the library's public wrapper with its own block sizes, warps and dtypes, at LLM sizes on CUDA
(Llama-like: 4096 hidden, 32 heads of 128, 8 KV heads, 16-32 sequences of 1-2k tokens) and at small sizes on the
CPU (TRITON_INTERPRET=1). Every call is in its own try/except: one failure must not hide the other launches.
The logits-penalty kernel is left out: it loads raw addresses from a tensor, which no replay with fresh
inputs can redraw safely. Run one library with `--lib colossalai` or `--lib flashnn`; `--only NAME[,NAME]` picks operators.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import torch

CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"
HALF = torch.float16
if CUDA:  # realistic decoder sizes (Llama-2/3 7-8B layer)
    TOKENS, HIDDEN, FFN, VOCAB = 4096, 4096, 11008, 32000
    HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
    BATCH, CTX, BLOCK = 32, 1024, 16
    PREFILL_SEQS, PREFILL_LEN = 4, 1024
    EXPERTS, TOPK, MOE_TOKENS, MOE_N, MOE_K = 8, 2, 1024, 2048, 4096
else:  # the interpreter runs every program instance in Python: keep it small
    TOKENS, HIDDEN, FFN, VOCAB = 8, 64, 128, 256
    HEADS, KV_HEADS, HEAD_DIM = 4, 2, 32
    BATCH, CTX, BLOCK = 2, 32, 16
    PREFILL_SEQS, PREFILL_LEN = 2, 32
    EXPERTS, TOPK, MOE_TOKENS, MOE_N, MOE_K = 4, 2, 16, 64, 64


def _randn(*shape: int, dtype: torch.dtype = HALF, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, device=DEV, dtype=torch.float32) * scale).to(dtype)


def _int8(*shape: int) -> torch.Tensor:
    return torch.randint(-127, 128, shape, device=DEV, dtype=torch.int8)


def _block_tables(num_seqs: int, blocks_per_seq: int) -> torch.Tensor:
    """Each sequence owns a contiguous run of cache blocks (block i*B+j), as a fresh paged cache would."""
    table = torch.arange(num_seqs * blocks_per_seq, dtype=torch.int32, device=DEV)
    return table.view(num_seqs, blocks_per_seq)


def _rope_cache(positions: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=DEV, dtype=torch.float32) / dim))
    freqs = torch.outer(torch.arange(positions, device=DEV, dtype=torch.float32), inv)
    return freqs.cos().to(HALF), freqs.sin().to(HALF)


def _moe_routing(tokens: int, experts: int, topk: int, bm: int):
    """Top-k routing padded per expert to a multiple of BM (what a moe_align_block_size step produces)."""
    logits = torch.randn(tokens, experts, device=DEV)
    topk_weights, topk_ids = torch.softmax(logits, -1).topk(topk, dim=-1)
    flat = topk_ids.flatten()
    sentinel = flat.numel()  # padding slots point past the valid tokens
    sorted_ids, expert_ids = [], []
    for e in range(experts):
        idx = (flat == e).nonzero().flatten().to(torch.int32)
        padded = math.ceil(max(idx.numel(), 1) / bm) * bm
        slot = torch.full((padded,), sentinel, dtype=torch.int32, device=DEV)
        slot[: idx.numel()] = idx
        sorted_ids.append(slot)
        expert_ids += [e] * (padded // bm)
    sorted_token_ids = torch.cat(sorted_ids)
    return (
        topk_weights.float().contiguous(),
        topk_ids.to(torch.int32).contiguous(),
        sorted_token_ids,
        torch.tensor(expert_ids, dtype=torch.int32, device=DEV),
        torch.tensor([sorted_token_ids.numel()], dtype=torch.int32, device=DEV),
    )


# ---------------------------------------------------------------- ColossalAI (colossalai/kernel/triton)


def col_context_attention_unpadded() -> None:
    from colossalai.kernel.triton import context_attention_unpadded

    lens = torch.full((PREFILL_SEQS,), PREFILL_LEN, dtype=torch.int32, device=DEV)
    n = int(lens.sum())
    q, k, v = _randn(n, HEADS, HEAD_DIM), _randn(n, KV_HEADS, HEAD_DIM), _randn(n, KV_HEADS, HEAD_DIM)
    blocks = PREFILL_LEN // BLOCK
    k_cache = torch.zeros(PREFILL_SEQS * blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=HALF, device=DEV)
    v_cache = torch.zeros_like(k_cache)
    context_attention_unpadded(q, k, v, k_cache, v_cache, lens, _block_tables(PREFILL_SEQS, blocks), BLOCK,
                               max_seq_len=PREFILL_LEN)


def col_flash_decoding_attention() -> None:
    from colossalai.kernel.triton import flash_decoding_attention

    blocks = CTX // BLOCK
    q = _randn(BATCH, HEADS, HEAD_DIM)
    k_cache = _randn(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, scale=0.5)
    v_cache = _randn(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, scale=0.5)
    lens = torch.full((BATCH,), CTX, dtype=torch.int32, device=DEV)
    splits = blocks
    mid = torch.empty(BATCH, HEADS, splits, HEAD_DIM, dtype=torch.float32, device=DEV)
    mid_lse = torch.empty(BATCH, HEADS, splits, dtype=torch.float32, device=DEV)
    flash_decoding_attention(q, k_cache, v_cache, lens, _block_tables(BATCH, blocks), BLOCK, CTX,
                             mid_output=mid, mid_output_lse=mid_lse, kv_group_num=HEADS // KV_HEADS)


def col_fused_rotary_embedding() -> None:
    from colossalai.kernel.triton import fused_rotary_embedding

    lens = torch.full((PREFILL_SEQS,), PREFILL_LEN, dtype=torch.int32, device=DEV)
    n = int(lens.sum())
    cos, sin = _rope_cache(n, HEAD_DIM)
    fused_rotary_embedding(_randn(n, HEADS, HEAD_DIM), _randn(n, HEADS, HEAD_DIM), cos, sin, lens)


def col_rotary_embedding() -> None:
    from colossalai.kernel.triton import rotary_embedding

    cos, sin = _rope_cache(TOKENS, HEAD_DIM)
    rotary_embedding(_randn(TOKENS, HEADS, HEAD_DIM), _randn(TOKENS, KV_HEADS, HEAD_DIM), cos, sin)


def col_rotary_embedding_kcache() -> None:
    """The decode form: rotate the new token's q/k and write k into the paged cache in one kernel."""
    from colossalai.kernel.triton import rotary_embedding

    blocks = CTX // BLOCK
    cos, sin = _rope_cache(BATCH, HEAD_DIM)
    k_cache = torch.zeros(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=HALF, device=DEV)
    lens = torch.full((BATCH,), CTX - 1, dtype=torch.int32, device=DEV)
    rotary_embedding(_randn(BATCH, HEADS, HEAD_DIM), _randn(BATCH, KV_HEADS, HEAD_DIM), cos, sin, k_cache,
                     _block_tables(BATCH, blocks), lens)


def col_decoding_fused_rotary_embedding() -> None:
    from colossalai.kernel.triton import decoding_fused_rotary_embedding

    blocks = CTX // BLOCK
    cos, sin = _rope_cache(BATCH, HEAD_DIM)
    k_cache = torch.zeros(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=HALF, device=DEV)
    v_cache = torch.zeros_like(k_cache)
    lens = torch.full((BATCH,), CTX - 1, dtype=torch.int32, device=DEV)
    decoding_fused_rotary_embedding(_randn(BATCH, HEADS, HEAD_DIM), _randn(BATCH, KV_HEADS, HEAD_DIM),
                                    _randn(BATCH, KV_HEADS, HEAD_DIM), cos, sin, k_cache, v_cache,
                                    _block_tables(BATCH, blocks), lens)


def col_copy_k_to_blocked_cache() -> None:
    from colossalai.kernel.triton import copy_k_to_blocked_cache

    blocks = CTX // BLOCK
    k_cache = torch.zeros(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=HALF, device=DEV)
    lens = torch.full((BATCH,), CTX - 1, dtype=torch.int32, device=DEV)
    copy_k_to_blocked_cache(_randn(BATCH, KV_HEADS, HEAD_DIM), k_cache, lens, _block_tables(BATCH, blocks))


def col_copy_kv_to_blocked_cache() -> None:
    from colossalai.kernel.triton import copy_kv_to_blocked_cache

    blocks = CTX // BLOCK
    k_cache = torch.zeros(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=HALF, device=DEV)
    v_cache = torch.zeros_like(k_cache)
    lens = torch.full((BATCH,), CTX - 1, dtype=torch.int32, device=DEV)
    copy_kv_to_blocked_cache(_randn(BATCH, KV_HEADS, HEAD_DIM), _randn(BATCH, KV_HEADS, HEAD_DIM), k_cache,
                             v_cache, lens, _block_tables(BATCH, blocks))


def col_rms_layernorm() -> None:
    from colossalai.kernel.triton import rms_layernorm

    rms_layernorm(_randn(TOKENS, HIDDEN), _randn(HIDDEN), 1e-5)


def col_fused_add_rms_layernorm() -> None:
    from colossalai.kernel.triton import rms_layernorm

    rms_layernorm(_randn(TOKENS, HIDDEN), _randn(HIDDEN), 1e-5, residual=_randn(TOKENS, HIDDEN))


def col_softmax() -> None:
    from colossalai.kernel.triton import softmax

    softmax(_randn(TOKENS, 1024 if CUDA else 64))


def col_get_xine_cache() -> None:
    from colossalai.kernel.triton import get_xine_cache

    cos, sin = _rope_cache(4096 if CUDA else 64, HEAD_DIM)
    lens = torch.full((BATCH,), CTX // 2, dtype=torch.int32, device=DEV)
    get_xine_cache(lens, cos, sin, is_prompts=True)
    get_xine_cache(lens, cos, sin, is_prompts=False)


def col_llama_act_combine() -> None:
    from colossalai.kernel.triton.llama_act_combine_kernel import LlamaActCombine

    rows = TOKENS // 4 if CUDA else TOKENS
    gate = _randn(rows, 2 * FFN).requires_grad_(True)
    up = _randn(rows, FFN).requires_grad_(True)
    LlamaActCombine.apply(gate, up).sum().backward()


# ---------------------------------------------------------------- FLASHNN (flashnn/triton_kernels)


def fnn_flash_attention() -> None:
    from flashnn.triton_kernels.flash_attn_v2 import triton_flash_attention_forward

    seq = PREFILL_LEN * 2 if CUDA else PREFILL_LEN
    q, k, v = (_randn(PREFILL_SEQS // 2 or 1, seq, HEADS, HEAD_DIM) for _ in range(3))
    triton_flash_attention_forward(q, k, v, True, 1 / math.sqrt(HEAD_DIM))


def _paged_inputs():
    blocks = CTX // BLOCK
    query = _randn(BATCH, HEADS, HEAD_DIM)
    k_cache = _randn(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, scale=0.5)
    v_cache = _randn(BATCH * blocks, KV_HEADS, BLOCK, HEAD_DIM, scale=0.5)
    lens = torch.full((BATCH,), CTX, dtype=torch.int32, device=DEV)
    return torch.empty_like(query), query, k_cache, v_cache, lens, _block_tables(BATCH, blocks)


def fnn_paged_attention() -> None:
    from flashnn.triton_kernels.paged_attn import paged_attention

    out, q, kc, vc, lens, tables = _paged_inputs()
    paged_attention(out, q, kc, vc, lens, tables, 1 / math.sqrt(HEAD_DIM), CTX)


def _mha_paged_inputs():
    """paged_attn v1/v2 take one KV head per query head (a head_mapping), so give them MHA caches."""
    blocks = CTX // BLOCK
    query = _randn(BATCH, HEADS, HEAD_DIM)
    k_cache = _randn(BATCH * blocks, HEADS, BLOCK, HEAD_DIM, scale=0.5)
    v_cache = _randn(BATCH * blocks, HEADS, BLOCK, HEAD_DIM, scale=0.5)
    lens = torch.full((BATCH,), CTX, dtype=torch.int32, device=DEV)
    mapping = torch.arange(HEADS, dtype=torch.int32, device=DEV)
    return torch.empty_like(query), query, k_cache, v_cache, mapping, _block_tables(BATCH, blocks), lens


def fnn_paged_attention_v1() -> None:
    from flashnn.triton_kernels.paged_attn_v1 import triton_paged_attention_v1

    out, q, kc, vc, mapping, tables, lens = _mha_paged_inputs()
    triton_paged_attention_v1(out, q, kc, vc, mapping, 1 / math.sqrt(HEAD_DIM), tables, lens)


def fnn_paged_attention_v2() -> None:
    from flashnn.triton_kernels.paged_attn_v2 import triton_paged_attention_v2

    out, q, kc, vc, mapping, tables, lens = _mha_paged_inputs()
    triton_paged_attention_v2(out, q, kc, vc, mapping, 1 / math.sqrt(HEAD_DIM), tables, lens, CTX)


def fnn_gemm_a8w8() -> None:
    from flashnn.triton_kernels.gemm_a8w8 import triton_gemm_a8w8_forward

    m, n, k = (TOKENS, HIDDEN, HIDDEN) if CUDA else (32, 64, 64)
    out = torch.empty(m, n, dtype=HALF, device=DEV)
    alpha_row = torch.rand(m, device=DEV, dtype=HALF) * 1e-2  # the wrapper wants the output's dtype
    alpha_col = torch.rand(n, device=DEV, dtype=HALF) * 1e-2
    triton_gemm_a8w8_forward(out, _int8(m, k), _int8(n, k), alpha_row, alpha_col)


def fnn_gemm_a16w8() -> None:
    from flashnn.triton_kernels.gemm_a16w8 import triton_gemm_a16w8_forward

    m, n, k = (TOKENS // 4, HIDDEN, HIDDEN) if CUDA else (32, 64, 64)
    out = torch.empty(m, n, dtype=HALF, device=DEV)
    triton_gemm_a16w8_forward(out, _randn(m, k), _int8(n, k), torch.rand(n, device=DEV, dtype=HALF) * 1e-2)


def fnn_gemm_a16w4() -> None:
    from flashnn.triton_kernels.gemm_a16w4 import triton_gemm_a16w4_forward

    m, n, k = (TOKENS // 4, HIDDEN, HIDDEN) if CUDA else (32, 1024, 1024)
    out = torch.empty(m, n, dtype=HALF, device=DEV)
    # two int4 values per int8 byte along N (the wrapper reads N from the packed weight's rows)
    qw = _int8(n // 2, k)
    triton_gemm_a16w4_forward(out, _randn(m, k), qw, torch.rand(n, device=DEV, dtype=HALF) * 1e-2)


def fnn_dynamic_quantize() -> None:
    from flashnn.triton_kernels.dynamic_quant import triton_dynamic_quantize

    x = _randn(TOKENS, HIDDEN)
    out = torch.empty(TOKENS, HIDDEN, dtype=torch.int8, device=DEV)
    scale = torch.empty(TOKENS, dtype=torch.float32, device=DEV)
    triton_dynamic_quantize(out, x, scale)


def fnn_layer_norm() -> None:
    from flashnn.triton_kernels.layer_norm import triton_layer_norm_forward

    triton_layer_norm_forward(_randn(TOKENS, HIDDEN), _randn(HIDDEN), _randn(HIDDEN), 1e-5)


def fnn_layer_norm_dquant() -> None:
    from flashnn.triton_kernels.layer_norm_dquant import triton_layer_norm_dquant_forward

    triton_layer_norm_dquant_forward(_randn(TOKENS, HIDDEN), _randn(HIDDEN), _randn(HIDDEN), 1e-5)


def fnn_rms_norm() -> None:
    from flashnn.triton_kernels.rms_norm import triton_rmsnorm_forward

    triton_rmsnorm_forward(_randn(TOKENS, HIDDEN), _randn(HIDDEN), 1e-6)


def fnn_rms_norm_dquant() -> None:
    from flashnn.triton_kernels.rms_norm_dquant import triton_rmsnorm_dquant_forward

    triton_rmsnorm_dquant_forward(_randn(TOKENS, HIDDEN), _randn(HIDDEN), 1e-6)


def fnn_rotary_embedding() -> None:
    from flashnn.triton_kernels.rotary_embedding import triton_rotary_embd_forward

    seq, bsz = (PREFILL_LEN, PREFILL_SEQS) if CUDA else (PREFILL_LEN, 1)
    cos, sin = _rope_cache(seq, HEAD_DIM)
    cos, sin = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)  # [seq, D]: both halves, as the test builds
    q, k = _randn(seq, bsz, HEADS, HEAD_DIM), _randn(seq, bsz, KV_HEADS, HEAD_DIM)
    triton_rotary_embd_forward(q, k, cos[:, None, None, :].contiguous(), sin[:, None, None, :].contiguous())


def fnn_fused_moe_fp16() -> None:
    from flashnn.triton_kernels.fused_moe_fp16 import fused_moe_fp16_forward

    bm = 64 if CUDA else 16
    routing = _moe_routing(MOE_TOKENS, EXPERTS, TOPK, bm)
    a = _randn(MOE_TOKENS, MOE_K, scale=0.1)
    b = _randn(EXPERTS, MOE_N, MOE_K, scale=0.05)
    c = torch.empty(MOE_TOKENS, TOPK, MOE_N, dtype=HALF, device=DEV)
    fused_moe_fp16_forward(a, b, c, *routing, True, TOPK, bm)


def fnn_fused_moe_a8w8() -> None:
    from flashnn.triton_kernels.fused_moe_a8w8 import fused_moe_a8w8_forward

    bm = 64 if CUDA else 16
    routing = _moe_routing(MOE_TOKENS, EXPERTS, TOPK, bm)
    c = torch.empty(MOE_TOKENS, TOPK, MOE_N, dtype=HALF, device=DEV)
    alpha_row = torch.rand(MOE_TOKENS, device=DEV, dtype=torch.float32) * 1e-2
    alpha_col = torch.rand(EXPERTS, MOE_N, device=DEV, dtype=torch.float32) * 1e-2
    fused_moe_a8w8_forward(_int8(MOE_TOKENS, MOE_K), _int8(EXPERTS, MOE_N, MOE_K), c, alpha_row, alpha_col,
                           *routing, True, TOPK, bm)


def fnn_fused_moe_a16w4() -> None:
    from flashnn.triton_kernels.fused_moe_a16w4 import fused_moe_a16w4_forward

    bm = 64 if CUDA else 16
    routing = _moe_routing(MOE_TOKENS, EXPERTS, TOPK, bm)
    a = _randn(MOE_TOKENS, MOE_K, scale=0.1)
    b = _int8(EXPERTS, MOE_N // 2, MOE_K)  # two int4 values per byte, packed along N
    c = torch.empty(MOE_TOKENS, TOPK, MOE_N, dtype=HALF, device=DEV)
    scale = torch.rand(EXPERTS, MOE_N, device=DEV, dtype=HALF) * 1e-2
    fused_moe_a16w4_forward(a, b, c, scale, None, *routing, True, TOPK, bm)


COLOSSALAI: list[Callable[[], None]] = [
    col_context_attention_unpadded, col_flash_decoding_attention, col_fused_rotary_embedding, col_rotary_embedding,
    col_rotary_embedding_kcache, col_decoding_fused_rotary_embedding, col_copy_k_to_blocked_cache,
    col_copy_kv_to_blocked_cache, col_rms_layernorm, col_fused_add_rms_layernorm, col_softmax, col_get_xine_cache,
    col_llama_act_combine,
]
FLASHNN: list[Callable[[], None]] = [
    fnn_flash_attention, fnn_paged_attention, fnn_paged_attention_v1, fnn_paged_attention_v2, fnn_gemm_a8w8,
    fnn_gemm_a16w8, fnn_gemm_a16w4, fnn_dynamic_quantize, fnn_layer_norm, fnn_layer_norm_dquant, fnn_rms_norm,
    fnn_rms_norm_dquant, fnn_rotary_embedding, fnn_fused_moe_fp16, fnn_fused_moe_a8w8,
    fnn_fused_moe_a16w4,
]


def _run(op: Callable[[], None]) -> bool:
    torch.manual_seed(0)
    try:
        op()
        if CUDA:
            torch.cuda.synchronize()  # a launch fault shows here, under this operator's name
        print(f"ok   {op.__name__}", flush=True)
        return True
    except Exception as exc:  # one op failing must not hide the others' launches
        print(f"FAIL {op.__name__}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", choices=["all", "colossalai", "flashnn"], default="all")
    parser.add_argument("--only", default="", help="comma-separated operator names (without col_/fnn_)")
    args = parser.parse_args()
    ops = {"colossalai": COLOSSALAI, "flashnn": FLASHNN}.get(args.lib, COLOSSALAI + FLASHNN)
    if args.only:
        wanted = set(args.only.split(","))
        ops = [op for op in ops if op.__name__.split("_", 1)[1] in wanted or op.__name__ in wanted]
    ok = sum(_run(op) for op in ops)
    print(f"{ok}/{len(ops)} operators ran on {DEV}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
