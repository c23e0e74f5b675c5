"""online-softmax: the max pass and the sum pass become one online pass (scalar and per-lane variants)."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = (ROOT / "bench" / "softmax" / "softmax.py").read_text(encoding="utf-8")
XENT = (ROOT / "bench" / "loss" / "cross_entropy.py").read_text(encoding="utf-8")

# a row that starts with a whole block of -inf (masked attention): the rescale must not produce NaN
MASKED = task('''
    M = 4
    N = 300
    TEST_SHAPES = [{"M": 3, "N": 200}, {"M": 2, "N": 77}]


    @triton.jit
    def lse_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            m = tl.maximum(m, tl.max(x, axis=0))
        s = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
            s += tl.sum(tl.exp(x - m), axis=0)
        tl.store(out_ptr + row, m + tl.log(s))


    class Model(nn.Module):
        def forward(self, x):
            return torch.logsumexp(x, dim=1)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0])
            lse_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=16)
            return out


    def get_inputs():
        x = torch.randn(M, N)
        x[:, :40] = -float("inf")
        return [x]
''')


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    out = {}
    for name, source, kernel in (("softmax", SOFTMAX, "softmax_kernel"), ("xent", XENT, "cross_entropy_kernel"),
                                 ("masked", MASKED, "lse_kernel")):
        candidates = rewrite("online-softmax", source, kernel)
        assert len(candidates) == 2
        out[f"{name}_scalar"], out[f"{name}_lanes"] = (c.source for c in candidates)
    return out


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    scalar = rewrites["softmax_scalar"]
    assert scalar.count("for start in range(0, n_cols, BLOCK_SIZE):") == 2  # was 3
    assert "denom = denom * tl.exp(row_max - row_max_safe) + tl.sum(tl.exp(x - row_max_safe), axis=0)" in scalar
    lanes = rewrites["softmax_lanes"]
    assert "row_max_lanes = tl.full([BLOCK_SIZE], -float(\"inf\"), dtype=tl.float32)" in lanes
    assert "    denom = tl.sum(denom_lanes * tl.exp(row_max_lanes - row_max_safe), axis=0)\n" in lanes
    # the third pass and everything after it is unchanged
    assert scalar.split("out_row = ")[1] == SOFTMAX.split("out_row = ")[1]


def test_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    check_correct({"masked_orig": MASKED, **rewrites}, tmp_path)


def test_declines() -> None:
    different = SOFTMAX.replace("denom += tl.sum(tl.exp(x - row_max), axis=0)", "denom += tl.sum(tl.exp(x - row_max) * x, axis=0)")
    assert "no max loop" in declined("online-softmax", different, "softmax_kernel")
    reads_max = SOFTMAX.replace("    denom = 0.0\n", "    denom = 0.0 * row_max\n")
    assert "read row_max" in declined("online-softmax", reads_max, "softmax_kernel")
    other_loads = SOFTMAX.replace(
        "        denom += tl.sum(", "        x = x * 2.0\n        denom += tl.sum("
    )
    assert "same values" in declined("online-softmax", other_loads, "softmax_kernel")
