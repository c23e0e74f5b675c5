"""TL141 (a computed value dropped: a cast or a tl function as a statement of its own) and TL142 (a bounds mask
built and never applied while an access moves along the indices it bounds unmasked). Statements with effects, masks
that are leftovers beside a mask on the same indices, and scalar flags stay quiet."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

SPLIT_MATMUL = """
import triton
import triton.language as tl

@triton.jit
def _scale(x, s):
    tl.store(x, s)
    return s

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    "a docstring is a statement of its own, and fine"
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_mask = (rows < M)[:, None]
    b_mask = (cols < N)[None, :]
    flag = tl.program_id(0) < 3
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :], mask=(k + ks)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * N + cols[None, :], mask=((k + ks)[:, None] < K) & b_mask, other=0.0)
        acc += tl.dot(a, b)
    acc.to(tl.float16)
    tl.debug_barrier()
    _scale(c_ptr, 1.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)
"""


def test_tl141_on_a_cast_dropped_and_never_on_statements_with_effects() -> None:
    (f,) = of(SPLIT_MATMUL, "TL141")
    assert f.span.line == locate(SPLIT_MATMUL, "acc.to(tl.float16)").line
    assert f.severity == Severity.WARNING and "immutable" in f.message
    where = SPLIT_MATMUL.replace("    acc.to(tl.float16)\n", "    tl.where(acc > 0, acc, 0.0)\n    acc * 2.0\n")
    assert len(of(where, "TL141")) == 2
    kept = SPLIT_MATMUL.replace("    acc.to(tl.float16)\n", "    acc = acc.to(tl.float16)\n")
    assert not of(kept, "TL141")
    # a tl function the rule does not know to be pure may act on memory (a TMA descriptor store): never flagged
    private = SPLIT_MATMUL.replace("    acc.to(tl.float16)\n", "    tl._experimental_descriptor_store(c_ptr, acc, [0, 0])\n")
    assert private != SPLIT_MATMUL and not of(private, "TL141")


def test_tl142_on_a_row_mask_no_access_applies() -> None:
    (f,) = of(SPLIT_MATMUL, "TL142")  # a_mask: the A load moves along rows with only a K mask; the store too
    assert f.span.line == locate(SPLIT_MATMUL, "a_mask = (rows < M)[:, None]").line
    assert "`rows`" in f.message and str(locate(SPLIT_MATMUL, "a = tl.load").line) in f.message
    # b_mask is read; `flag` is a scalar comparison, not a mask over lanes: neither is reported
    used = SPLIT_MATMUL.replace("mask=(k + ks)[None, :] < K, other=0.0)", "mask=a_mask & ((k + ks)[None, :] < K), "
                                "other=0.0)").replace("tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)",
                                                      "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, "
                                                      "mask=a_mask & b_mask)")
    assert used != SPLIT_MATMUL and not of(used, "TL142")


def test_tl142_quiet_when_the_accesses_are_masked_along_those_indices_another_way() -> None:
    leftover = SPLIT_MATMUL.replace(
        "mask=(k + ks)[None, :] < K, other=0.0)", "mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)"
    ).replace("tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)",
              "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows < M)[:, None])")
    assert leftover != SPLIT_MATMUL
    assert not of(leftover, "TL142")  # a_mask is a leftover: every access along rows has a row mask
