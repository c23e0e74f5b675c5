"""online-rescale: a max pass folded into the pass that exponentiates against it, accumulators rescaled (the
flash form of attention when chained after row-blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]


def bench(name: str) -> str:
    return (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")


ATTENTION = bench("attention/attention")


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    blocks = rewrite("row-blocks", ATTENTION, "attention_kernel", codes=("TL133",))[0].source
    out = {
        "attention": rewrite("online-rescale", ATTENTION, "attention_kernel")[0].source,
        "attention_flash": rewrite("online-rescale", blocks, "attention_kernel")[0].source,
        "softmax": rewrite("online-rescale", bench("softmax/softmax"), "softmax_kernel")[0].source,
        "cross_entropy": rewrite("online-rescale", bench("loss/cross_entropy"), "cross_entropy_kernel")[0].source,
    }
    # the other order of the chain gives the same flash form
    out["flash_other_order"] = rewrite("row-blocks", out["attention"], "attention_kernel", codes=("TL133",))[0].source
    return out


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    flash = rewrites["attention_flash"]
    assert flash.count("for start in range(0, seq_len, BLOCK_N):") == 1  # one pass over the keys
    assert "        s_for_max = tl.where(keys < seq_len, s, -float(\"inf\"))\n" in flash
    assert "        m_new = tl.maximum(m, tl.max(s_for_max, axis=1, keep_dims=True))\n" in flash
    assert "        alpha = tl.exp(m - m_safe)\n" in flash
    assert "        p = tl.where(keys < seq_len, tl.exp(s - m_safe), 0.0)\n" in flash
    assert "        acc = acc * alpha + tl.dot(p, v.to(tl.float32))\n" in flash
    assert "        l_sum = l_sum * alpha + tl.sum(p, axis=1, keep_dims=True)\n        acc" in flash
    assert "        m = m_new\n    tl.store(" in flash
    assert rewrites["flash_other_order"].count("tl.dot(") == 2 and rewrites["flash_other_order"].count("    for start in range(") == 1


def test_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    check_correct(rewrites, tmp_path)


def test_declines() -> None:
    squared = ATTENTION.replace("l_sum += tl.sum(p, axis=0)", "l_sum += tl.sum(p * p, axis=0)")
    assert "cannot rescale" in declined("online-rescale", squared, "attention_kernel")  # p * p: degree 2
    not_zero = ATTENTION.replace("    l_sum = 0.0\n", "    l_sum = 1.0\n")
    assert "start from zero" in declined("online-rescale", not_zero, "attention_kernel")
    read_m = ATTENTION.replace("l_sum += tl.sum(p, axis=0)", "l_sum += tl.sum(p, axis=0) + m * 0.0")
    assert "outside tl.exp" in declined("online-rescale", read_m, "attention_kernel")
    headers = ATTENTION.replace("for start in range(0, seq_len, BLOCK_N):\n        keys", "for start in range(0, seq_len, BLOCK_N * 1):\n        keys", 1)
    assert "different headers" in declined("online-rescale", headers, "attention_kernel")
    assert "no max loop" in declined("online-rescale", bench("softmax/log_softmax"), "log_softmax_kernel")
