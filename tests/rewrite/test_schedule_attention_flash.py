"""schedule-attention-flash: attention drafts in several styles (a per-query two-pass softmax with tl.sum products, an
online softmax with tl.exp masked on every block, causal and not, flash drafts of the tuning set) are re-emitted in
the flash form (tl.dot, exp2 with the folded scale, masks only on boundary/diagonal blocks, causal blocks skipped)
and stay correct under the interpreter at sequence lengths that are no multiple of any block."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

from tritonlens.analysis.kernels import parse_module

NAME = "schedule-attention-flash"
ROOT = Path(__file__).resolve().parents[2] / "bench"

# one program per query row, two passes over the keys, causal, scale applied inside the exp, fp32 inputs
TWO_PASS_CAUSAL = task('''
@triton.jit
def causal_rows(q_ptr, k_ptr, v_ptr, o_ptr, n_ctx, sm_scale, D: tl.constexpr, BK: tl.constexpr):
    row = tl.program_id(0)
    head = tl.program_id(1)
    off = head * n_ctx * D
    d = tl.arange(0, D)
    q = tl.load(q_ptr + off + row * D + d)
    mx = -float("inf")
    for j in range(0, n_ctx, BK):
        kk = j + tl.arange(0, BK)
        k = tl.load(k_ptr + off + kk[:, None] * D + d[None, :], mask=kk[:, None] < n_ctx, other=0.0)
        s = tl.sum(k * q[None, :], axis=1)
        s = tl.where((kk < n_ctx) & (kk <= row), s, -float("inf"))
        mx = tl.maximum(mx, tl.max(s, axis=0))
    den = 0.0
    out = tl.zeros((D,), dtype=tl.float32)
    for j in range(0, n_ctx, BK):
        kk = j + tl.arange(0, BK)
        k = tl.load(k_ptr + off + kk[:, None] * D + d[None, :], mask=kk[:, None] < n_ctx, other=0.0)
        v = tl.load(v_ptr + off + kk[:, None] * D + d[None, :], mask=kk[:, None] < n_ctx, other=0.0)
        s = tl.sum(k * q[None, :], axis=1)
        e = tl.where((kk < n_ctx) & (kk <= row), tl.exp((s - mx) * sm_scale), 0.0)
        den += tl.sum(e, axis=0)
        out += tl.sum(e[:, None] * v, axis=0)
    # normalise once per row
    tl.store(o_ptr + off + row * D + d, out / den)


class Model(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        h, n, dim = q.shape
        o = torch.empty_like(q)
        causal_rows[(n, h)](q, k, v, o, n, dim ** -0.5, D=dim, BK=16)
        return o


def get_inputs():
    return [torch.randn(H, S, HD) for _ in range(3)]


H, S, HD = 2, 37, 32
TEST_SHAPES = [{"H": 2, "S": 37, "HD": 32}, {"H": 1, "S": 71, "HD": 64}]
''')

BENCH = {
    "two_pass_rows": "attention/attention.py",
    "online_exp_causal": "attention/causal_attention.py",
    "flash_hd128": "blind/attention/attention_hd128.py",
    "flash_causal_hd64": "blind/attention/causal_attention_hd64.py",
    # head dims padded to a power of two and masked (`offs_d < D`), bf16 tiles upcast under a constexpr flag for
    # the interpreter, K/V heads shared by groups of query heads
    "flash_padded_hd256": "blind6/attention/attention_hd256_fp16.py",
    "flash_causal_hd80_upcast": "blind6/attention/causal_attention_hd80_bf16.py",
    "flash_gqa_upcast": "blind6/attention/gqa_attention_noncausal_bf16.py",
    "flash_causal_softcap": "blind6/attention/causal_attention_softcap_fp16.py",
    "flash_gqa_causal": "blind3/attention/gqa_causal_attention_fp16.py",
    "flash_padded_hd32": "blind5/attention/attention_hd32_long_fp16.py",
    "flash_padded_causal_hd96": "blind5/attention/causal_attention_hd96_fp16.py",
}


# the team's online-softmax draft with a soft cap on its scores, 4 * tanh(s / 4) written through tl.sigmoid, and the
# reference computing the same
SCORES = "        s = tl.dot(q, tl.trans(k)) * scale\n"
SOFTCAP = SCORES + "        t = s / 4.0\n        s = 4.0 * (2.0 * tl.sigmoid(2.0 * t) - 1.0)\n"
SOFTCAP_MODEL = '''class Model(nn.Module):
    def forward(self, q, k, v):
        s = 4.0 * torch.tanh(q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1]) / 4.0)
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        return (torch.softmax(s, -1) @ v.float()).half()


class ModelNew('''


def _softcapped() -> str:
    text = (ROOT / "attention/causal_attention.py").read_text(encoding="utf-8")
    assert SCORES in text
    head, rest = text.replace(SCORES, SOFTCAP).split("class Model(", 1)
    return head + SOFTCAP_MODEL + rest.split("class ModelNew(", 1)[1]


def _kernel(text: str) -> str:
    return next(k.name for k in parse_module(text).kernels if k.launched)


def test_own_draft_becomes_flash_with_causal_skipping() -> None:
    (cand,) = rewrite(NAME, TWO_PASS_CAUSAL, "causal_rows")
    new = cand.source
    assert new.count("tl.dot(") == 4 and "tl.exp2(" in new and "tl.exp(" not in new.split("class Model")[0]
    assert "(sm_scale) * 1.4426950408889634" in new  # the scale from inside the draft's exp, folded with log2 e
    assert "tl.minimum((start_m + 1) * BLOCK_M + 0, n_ctx)" in new  # the loop stops at the diagonal block
    assert "# normalise once per row" in new and "out / den" in new  # the draft's own epilogue
    assert "BLOCK_M=64" in new and "num_stages=2" in new and 'META["BLOCK_M"]' in new


@pytest.mark.parametrize("stem", sorted(BENCH))
def test_bench_drafts_rewritten(stem: str) -> None:
    text = (ROOT / BENCH[stem]).read_text(encoding="utf-8")
    (cand,) = rewrite(NAME, text, _kernel(text))
    start = cand.source.index("@triton.jit")
    kernel = cand.source[start:cand.source.index("\n\n\n", start)]
    assert "tl.exp2(" in kernel and "tl.dot(" in kernel
    assert ("tl.exp(" in kernel) == ("softcap" in stem)  # only the draft's own soft cap keeps its tl.exp
    assert ("causal" in stem) == ("causal block skipping" in cand.title)
    if "padded" in stem or "upcast" in stem:  # the head-dim mask on every Q/K/V tile, unmasked key blocks too
        assert kernel.count("(lane_d[:, None] < ") == 2 and kernel.count("(lane_d[None, :] < ") == 3
    if "upcast" in stem:  # the draft's static casts follow each tile the flash form loads
        assert kernel.count(".to(tl.float32)") == 1 + 2 * 2 + (2 if "causal" in stem else 0)  # q; k, v and (hd80) p per block


def test_score_modification_is_carried() -> None:
    (cand,) = rewrite(NAME, _softcapped(), "causal_attention_kernel")
    new = cand.source
    # each block's scores: the draft's scale, its modification on the new name, then log2(e), then the masks
    assert new.count("scores = tl.dot(q, k) * qk_scale\n        t = scores / 4.0\n        scores = 4.0 * (2.0 * "
                     "tl.sigmoid(2.0 * t) - 1.0)\n        scores = scores * 1.4426950408889634\n") == 2
    assert "qk_scale = (scale)\n" in new and "modification of the scores" in cand.rationale
    # the softcap draft of blind set 6 (tuning) wrote tanh with tl.exp; read as a scale of 1/cap before the fix
    text = (ROOT / "blind6/attention/causal_attention_softcap_fp16.py").read_text(encoding="utf-8")
    new = rewrite(NAME, text, _kernel(text))[0].source
    assert "qk_scale = (scale)\n" in new and new.count("t = scores / cap") == 2
    # an additive mask is a mask, not a modification
    text = (ROOT / "attention/causal_attention.py").read_text(encoding="utf-8")
    additive = text.replace('s = tl.where(allowed, s, -float("inf"))', 's = s + tl.where(allowed, 0.0, -float("inf"))')
    assert additive != text
    new = rewrite(NAME, additive, "causal_attention_kernel")[0].source
    assert "tl.where(allowed" not in new and "* 1.4426950408889634" in new


def test_candidates_correct_under_interpreter(tmp_path) -> None:
    sources = {"two_pass_causal": rewrite(NAME, TWO_PASS_CAUSAL, "causal_rows")[0].source,
               "softcap_sigmoid": rewrite(NAME, _softcapped(), "causal_attention_kernel")[0].source}
    for stem, rel in BENCH.items():
        text = (ROOT / rel).read_text(encoding="utf-8")
        sources[stem] = rewrite(NAME, text, _kernel(text))[0].source
    check_correct(sources, tmp_path)


def test_declines_with_the_models_reason() -> None:
    bf16 = (ROOT / "blind/attention/causal_attention_hd32_bf16.py").read_text(encoding="utf-8")
    assert "branch" in declined(NAME, bf16, "causal_attention_kernel")
    prefix = TWO_PASS_CAUSAL.replace("(kk <= row)", "((kk <= row) | (kk < 8))")  # a prefix-LM mask
    assert "with `|`" in declined(NAME, prefix, "causal_rows")
    alibi = _softcapped().replace("t = s / 4.0", "t = s - 0.1 * (offs_m[:, None] - offs_n[None, :])")
    assert "modified with offs_m, offs_n" in declined(NAME, alibi, "causal_attention_kernel")
    # a mask added under a static branch (a public draft's `if is_causal: S += mask`): declined with the branch
    branched = _softcapped().replace("        t = s / 4.0\n", "        if HEAD_DIM > 0:\n            t = s / 4.0\n")
    assert "scores are read inside an `if`" in declined(NAME, branched, "causal_attention_kernel")
    anti = TWO_PASS_CAUSAL.replace("(kk <= row)", "(kk >= row)")
    assert "not a causal mask" in declined(NAME, anti, "causal_rows")
    capped = TWO_PASS_CAUSAL.replace("e = tl.where((kk < n_ctx) & (kk <= row), tl.exp(",
                                     "e = tl.where((kk < n_ctx) & (kk <= row), tl.sigmoid(s) * tl.exp(")
    assert "tl.sigmoid" in declined(NAME, capped, "causal_rows")
    flash = (ROOT / "blind/attention/attention_hd128.py").read_text(encoding="utf-8")
    done = rewrite(NAME, flash, "attention_kernel")[0].source
    assert "already in the target form" in declined(NAME, done, "attention_kernel")
    matmul = (ROOT / "blind/matmul/addmm_relu.py").read_text(encoding="utf-8")
    assert "not attention" in declined(NAME, matmul, _kernel(matmul))
