"""row-blocks: one program per row becomes a block of rows; per-row matrix-vector products become tl.dot, and a
fixed-address atomic of a per-row value adds one masked block sum."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

ROOT = Path(__file__).resolve().parents[2]


def bench(name: str) -> str:
    return (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")


GEMV_ROWS = task('''
    M = 8
    N = 64
    K = 32
    TEST_SHAPES = [{"M": 37, "N": 40, "K": 16}, {"M": 5, "N": 16, "K": 32}]


    @triton.jit
    def linear_rows_kernel(x_ptr, w_ptr, out_ptr, n, K: tl.constexpr, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        ks = tl.arange(0, K)
        x = tl.load(x_ptr + row * K + ks)
        count = 0
        for start in range(0, n, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=cols[:, None] < n, other=0.0)
            y = tl.sum(w * x[None, :], axis=1)
            tl.store(out_ptr + row * n + cols, y, mask=cols < n)
            count += 1
        tl.store(out_ptr + row * n, tl.load(out_ptr + row * n) + count * 0.0)


    class Model(nn.Module):
        def forward(self, x, w):
            return x @ w.t()


    class ModelNew(nn.Module):
        def forward(self, x, w):
            out = torch.empty(x.shape[0], w.shape[0])
            linear_rows_kernel[(x.shape[0],)](x, w, out, w.shape[0], K=x.shape[1], BLOCK_N=16)
            return out


    def get_inputs():
        return [torch.randn(M, K), torch.randn(N, K)]
''')


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    out = {}
    for label, source, kernel, codes in (
        ("attention", bench("attention/attention"), "attention_kernel", ("TL133",)),
        ("nll", bench("loss/nll"), "nll_kernel", ("TL105",)),  # level 1: one element per program
        ("scatter_add", bench("gather/scatter_add"), "scatter_add_kernel", ("TL211",)),
        ("gemv_rows", GEMV_ROWS, "linear_rows_kernel", ("TL133",)),
    ):
        large, small = rewrite("row-blocks", source, kernel, codes=codes)
        out[label] = large.source
        out[f"{label}_small"] = small.source
    return out


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    new = rewrites["attention"]
    assert "query = (tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS))[:, None]\n    query_ok = query < n_rows_total\n" in new
    assert "s = tl.dot(q, tl.trans(k.to(tl.float32))) * scale" in new
    assert "acc += tl.dot(p, v.to(tl.float32))" in new
    assert "m = tl.maximum(m, tl.max(s, axis=1, keep_dims=True))" in new
    assert "m = tl.full((BLOCK_ROWS, 1), -float(\"inf\"), dtype=tl.float32)" in new
    assert "acc = tl.zeros((BLOCK_ROWS, HEAD_DIM), dtype=tl.float32)" in new
    assert "attention_kernel[(triton.cdiv(s, 64), b * h)](" in new and "n_rows_total=s, BLOCK_ROWS=64)" in new
    assert "tl.atomic_add(out_ptr, tl.sum(tl.where(row_ok, -v * inv_rows, 0)))" in rewrites["nll"]
    assert "nll_kernel[(triton.cdiv(m, 1024),)]" in rewrites["nll"]
    assert "count = tl.full((BLOCK_ROWS, 1), 0, dtype=tl.int32)" not in rewrites["gemv_rows"]  # count is not per-row
    assert "y = tl.dot(x, tl.trans(w))" in rewrites["gemv_rows"]


def test_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    # the test shapes have row counts that are no multiple of 16, 64, 128 or 1024 (45, 37, 5, 100)
    check_correct(rewrites, tmp_path)


def test_declines() -> None:
    assert "2D value that depends on the row" in declined(
        "row-blocks", bench("attention/causal_attention"), "causal_attention_kernel", codes=("TL133",))
    assert "no evidence" in declined("row-blocks", bench("loss/nll"), "nll_kernel")
    bounds = bench("attention/attention").replace("for start in range(0, seq_len, BLOCK_N):\n        keys",
                                                  "for start in range(0, seq_len + query * 0, BLOCK_N):\n        keys", 1)
    assert "loop bounds" in declined("row-blocks", bounds, "attention_kernel", codes=("TL133",))
    branch = bench("loss/nll").replace("    tl.atomic_add(", "    if t > 0:\n        tl.atomic_add(")
    assert "branches" in declined("row-blocks", branch, "nll_kernel", codes=("TL132",))
    assert "already indexes a block of elements" in declined(
        "row-blocks", bench("activation/gelu_tanh"), "gelu_tanh_kernel", codes=("TL211",))
    lam = bench("loss/nll").replace("nll_kernel[(m,)]", "nll_kernel[lambda meta: (m,)]")
    assert "not a tuple" in declined("row-blocks", lam, "nll_kernel", codes=("TL132",))
