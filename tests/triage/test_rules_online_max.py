"""TL137: a max-only pass over a row and a second pass that re-reads it to sum exponentials fuse (online form)."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

SAMPLER = """
import triton
import triton.language as tl

@triton.jit
def row_lse(logits_ptr, out_ptr, V, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * stride
    m = -float("inf")
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=-float("inf"))
        s += tl.sum(tl.exp(x - m), axis=0)
    tl.store(out_ptr + row, m + tl.log(s))
"""


def test_tl137_names_the_online_fusion_of_a_max_pass_and_a_sum_pass() -> None:
    (f,) = of(SAMPLER, "TL137")
    assert f.span == locate(SAMPLER, "tl.max(x, axis=0)")
    assert f.severity == Severity.WARNING and f.data["pointer"] == "logits_ptr" and f.data["running_max"] == "m"
    assert "online form" in f.message and f.data["sum_loop_line"] == locate(SAMPLER, "for start", 2).line
    assert not of(SAMPLER, "TL108")  # one cause, one finding: TL137 names the fusion


def test_tl137_through_a_local_name_and_a_local_exponential() -> None:
    src = SAMPLER.replace(
        "        m = tl.maximum(m, tl.max(x, axis=0))", "        bm = tl.max(x, axis=0)\n        m = tl.maximum(m, bm)"
    ).replace(
        "        s += tl.sum(tl.exp(x - m), axis=0)", "        e = tl.exp(x - m)\n        s += tl.sum(e, axis=0)"
    )
    (f,) = of(src, "TL137")
    assert f.data["running_max"] == "m"


def test_tl137_silent_when_the_first_loop_is_already_online() -> None:
    online = SAMPLER.replace(
        "        m = tl.maximum(m, tl.max(x, axis=0))",
        "        m_new = tl.maximum(m, tl.max(x, axis=0))\n"
        "        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n        m = m_new",
    )
    assert not of(online, "TL137")


def test_tl137_silent_when_the_second_pass_needs_the_final_max() -> None:
    # near miss: the second loop writes x - m (needs the final max), it does not sum exponentials
    src = SAMPLER.replace(
        "        s += tl.sum(tl.exp(x - m), axis=0)", "        tl.store(out_ptr + row * stride + cols, x - m, mask=cols < V)"
    )
    assert not of(src, "TL137")
    stored = SAMPLER.replace(
        "        s += tl.sum(tl.exp(x - m), axis=0)",
        "        p = tl.exp(x - m)\n        tl.store(out_ptr + row * stride + cols, p, mask=cols < V)",
    )
    assert not of(stored, "TL137")


def test_tl137_silent_for_different_rows_or_ranges() -> None:
    second = "        x = tl.load(base + cols, mask=cols < V, other=-float('inf'))\n        s +="
    src = SAMPLER.replace('other=-float("inf"))\n        s +=', "other=-float('inf'))\n        s +=")
    assert second in src and of(src, "TL137")
    other_row = src.replace(second, second.replace("base + cols", "out_ptr + cols"))
    assert not of(other_row, "TL137")
    tail = src.replace("    for start in range(0, V, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n" + second,
                       "    for start in range(V, 2 * V, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n" + second)
    assert tail != src and not of(tail, "TL137")


def test_tl137_is_info_when_the_sum_pass_also_writes() -> None:
    src = SAMPLER.replace(
        "        s += tl.sum(tl.exp(x - m), axis=0)",
        "        s += tl.sum(tl.exp(x - m), axis=0)\n        tl.store(out_ptr + V + cols, x * 2.0, mask=cols < V)",
    )
    (f,) = of(src, "TL137")
    assert f.severity == Severity.INFO
