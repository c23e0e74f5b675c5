"""schedule-dot-tiles: K accumulations in any style (scalar, rank-1, blocked tl.dot, batched with a transposed
operand) are re-emitted as tl.dot tiles with the draft's epilogue, and stay correct under the interpreter at
sizes that are no multiple of any block."""

from __future__ import annotations

from pathlib import Path

import dot_drafts as drafts
import pytest
from recipe_helpers import check_correct, declined, rewrite

STYLES = {
    "scalar": (drafts.SCALAR, "mm_scalar"),
    "rank1": (drafts.RANK1, "mm_rank1"),
    "blocked": (drafts.BLOCKED, "linear_silu"),
    "batched_t": (drafts.BATCHED_T, "bmm_bt"),
    "shared_w": (drafts.SHARED_W, "shared_w"),
}
NAME = "schedule-dot-tiles"


def _candidates(style: str) -> list:
    source, kernel = STYLES[style]
    return rewrite(NAME, source, kernel)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_becomes_dot_tiles(style: str) -> None:
    source, kernel = STYLES[style]
    ieee, wide, tf32 = _candidates(style)
    new = ieee.source
    assert "tl.dot(" in new and "GROUP_M" in new and "num_stages=3" in new
    assert 'input_precision="ieee"' in new and 'input_precision="tf32"' in tf32.source
    # a second tile, three config-search steps away, measured faster on an H100 (bench/results/h100-dot-probe)
    assert "128x256x64 tiles" in wide.title and "=256" in wide.source and "=256" not in new
    assert "h100-dot-probe" in wide.rationale and wide.config != ieee.config
    # the candidates after it keep the default tile in their launch, rationale and config
    assert tf32.config == ieee.config and "128x128 output tiles" in tf32.rationale and "=256" not in tf32.source
    assert "TF32" in tf32.rationale and "rounds" in tf32.rationale
    # the signature only grows at its end, and everything outside the kernel and its launch is unchanged
    head = source.split(f"def {kernel}(")[1].split(")")[0]
    assert new.split(f"def {kernel}(")[1].startswith(head)
    assert new.split("class Model(")[1].split("class ModelNew")[0] == source.split("class Model(")[1].split(
        "class ModelNew")[0]


def test_epilogue_is_the_drafts_own() -> None:
    new = _candidates("blocked")[0].source
    assert "y = z * tl.sigmoid(z)" in new and "z = acc + bias[None, :]" in new
    new = _candidates("scalar")[0].source
    assert "# bias then ReLU, as the reference does" in new and "out = tl.maximum(acc + bias, 0.0)" in new


def test_candidates_correct_under_interpreter(tmp_path) -> None:
    sources = {}
    for style in STYLES:
        ieee, wide, tf32 = _candidates(style)
        sources[f"{style}_ieee"] = ieee.source
        sources[f"{style}_wide"] = wide.source
    check_correct(sources, tmp_path)


# long K, few output tiles: K shapes that split (K // 512 slices, at most what 132 SMs take for one tile)
LONG_K = {"M": 37, "N": 45, "K": 1100}, {"M": 70, "N": 19, "K": 1700}


@pytest.mark.parametrize("style", ["scalar", "blocked"])
def test_split_k_when_the_profiled_grid_is_small(style: str, tmp_path) -> None:
    source, kernel = STYLES[style]
    source = source.replace(source.split("TEST_SHAPES = ")[1].split("\n")[0], repr(list(LONG_K)))
    *_, split = rewrite(NAME, source, kernel, grid=(2, 3))  # 6 programs were profiled: far fewer than the SMs
    new = split.source
    assert "split-K" in split.title and "Split-K" in split.rationale and "**guess:**" in split.rationale
    # both drafts multiply fp32 exactly: the split-K candidate is the TF32 one and says so in title and rationale
    assert "TF32" in split.title and "**TF32**" in split.rationale
    assert "k_first = tl.program_id(1) * k_slice" in new
    assert "tl.atomic_add(acc_partials + slot, acc, mask=" in new and "finishes = tl.atomic_add(arrivals + pid, 1)" in new
    assert "k_splits = max(1, min(16, 132 // (triton.cdiv(" in new and ", k_splits)](" in new
    assert "acc_partials=acc_partials, arrivals=arrivals)" in new and "=256" not in new
    check_correct({f"{style}_split": new}, tmp_path)  # 2 and 3 slices at these shapes, each finishing the epilogue
    # no profile, a profiled grid that fills the device, or a batch axis: no split-K candidate
    assert len(rewrite(NAME, source, kernel, grid=(16, 16))) == len(rewrite(NAME, source, kernel))
    assert not any("split-K" in c.title for c in rewrite(NAME, drafts.BATCHED_T, "bmm_bt", grid=(1, 1, 2)))


def test_split_k_of_an_fp16_dot_claims_no_tf32() -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "blind5" / "matmul" / "matmul_large_k_fp16.py"
    *_, split = rewrite(NAME, path.read_text(encoding="utf-8"), "matmul_kernel", grid=(8, 8))
    assert split.title.endswith("(split-K)") and "TF32" not in split.rationale


def test_declines_with_the_models_reason() -> None:
    extra = drafts.RANK1.replace("        acc += a[:, None]", "        a = tl.exp(a)\n        acc += a[:, None]")
    assert "not a plain product" in declined(NAME, extra, "mm_rank1")
    padded = drafts.RANK1.replace("mask=mask_m, other=0.0)", "mask=mask_m, other=1.0)")
    assert "non-zero" in declined(NAME, padded, "mm_rank1")
    elementwise = drafts.task('''
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
''')
    assert "classifies the kernel as elementwise" in declined(NAME, elementwise, "add_kernel")
    unbounded = drafts.RANK1.replace("mask_m = offs_m < M", "mask_m = offs_m >= 0")
    assert "no bound for the M axis" in declined(NAME, unbounded, "mm_rank1")
    nested = drafts.RANK1.replace("    for k in range(K):", "    if K > 0:\n      for k in range(K):")
    assert "not a statement of the kernel's body" in declined(NAME, nested, "mm_rank1")


BLIND = ["addmm_relu", "linear_silu", "matmul_bias_gelu", "matmul_scale_residual", "matmul_transposed_b"]


def test_blind_matmul_drafts_rewritten_and_correct(tmp_path) -> None:
    """The tuning set's first drafts (bench/blind/matmul) on their own TEST_SHAPES; the constexpr branch in the K
    loop of batched_matmul_bf16 is declined with its line."""
    from pathlib import Path

    from tritonlens.analysis.kernels import parse_module

    root = Path(__file__).resolve().parents[2] / "bench" / "blind" / "matmul"
    sources = {}
    for stem in BLIND:
        text = (root / f"{stem}.py").read_text(encoding="utf-8")
        kernel = next(k.name for k in parse_module(text).kernels if k.launched)
        sources[stem] = rewrite(NAME, text, kernel)[0].source
    check_correct(sources, tmp_path)
    bmm = (root / "batched_matmul_bf16.py").read_text(encoding="utf-8")
    assert "the K loop also does `if" in declined(NAME, bmm, "bmm_kernel")


def test_a_launch_with_a_trailing_comma_gains_every_argument(tmp_path) -> None:
    """Two edits append arguments at the same `)` (the tile options, then split-K's workspace): after a trailing
    comma each keeps one of its own (the split-K candidate of a blind draft did not parse: `GROUP_M=8 acc_...`)."""
    source = drafts.BLOCKED.replace("BLOCK_K=16, num_warps=4)", "BLOCK_K=16, num_warps=4,\n        )")
    source = source.replace(source.split("TEST_SHAPES = ")[1].split("\n")[0], repr(list(LONG_K)))
    assert "num_warps=4,\n        )" in source
    *_, split = rewrite(NAME, source, "linear_silu", grid=(2, 3))
    assert "split-K" in split.title
    compile(split.source, "split", "exec")
    assert "GROUP_M=8, num_stages=3, acc_partials=acc_partials, arrivals=arrivals," in " ".join(split.source.split())
    check_correct({"trailing_comma_split": split.source}, tmp_path)


def test_a_static_recast_of_the_operands_is_carried_after_the_new_loads(tmp_path) -> None:
    """`if UPCAST: x = x.to(tl.float32)` in the K loop (drafts upcast bf16 tiles for the interpreter) no longer
    declines the schedule: the branch follows the schedule's own loads, under the same constexpr test."""
    source = drafts.BLOCKED.replace(
        "BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):", "BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,\n"
        "                UPCAST: tl.constexpr):").replace(
        "        acc += tl.dot(x, w, input_precision=\"ieee\")",
        "        if UPCAST:\n            x = x.to(tl.float32)\n            w = w.to(tl.float32)\n"
        "        acc += tl.dot(x, w, input_precision=\"ieee\")").replace("num_warps=4)", "num_warps=4, UPCAST=True)")
    assert source.count("UPCAST") == 3
    first, *_ = rewrite(NAME, source, "linear_silu")
    body = first.source.split("for k_start in")[1]
    assert "if UPCAST:\n            x = x.to(tl.float32)" in body and "if UPCAST:\n            w = w.to(tl.float32)" in body
    check_correct({"static_recast": first.source}, tmp_path)
    other = source.replace("            w = w.to(tl.float32)\n", "            w = w * 2.0\n")  # not a recast
    assert "K loop also does `if UPCAST:`" in declined(NAME, other, "linear_silu")
