"""reciprocal-multiply: one division per program, a multiply per element."""

from __future__ import annotations

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

NORM = task('''
    M = 8
    N = 300
    TEST_SHAPES = [{"M": 4, "N": 128}, {"M": 5, "N": 77}]


    @triton.jit
    def norm_kernel(x_ptr, out_ptr, n_cols, scale, BLOCK: tl.constexpr):
        """Divides each row by its L1 norm and by `scale`."""
        row = tl.program_id(0)
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            total += tl.sum(tl.abs(tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            y = (x + 1.0) / total - x / scale
            tl.store(out_ptr + row * n_cols + cols, y, mask=cols < n_cols)


    class Model(nn.Module):
        def forward(self, x):
            return (x + 1.0) / x.abs().sum(1, keepdim=True) - x / 3.0


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            norm_kernel[(x.shape[0],)](x, out, x.shape[1], 3.0, BLOCK=32)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


@pytest.fixture(scope="module")
def rewritten() -> str:
    return rewrite("reciprocal-multiply", NORM, "norm_kernel")[0].source


def test_rewrite_shape(rewritten: str) -> None:
    # both reciprocals are hoisted right before the loop that divides (total is final after the first loop)
    assert "        total += tl.sum(" in rewritten
    assert "    inv_total = 1.0 / total\n    inv_scale = 1.0 / scale\n    for start" in rewritten
    assert "y = (x + 1.0) * inv_total - x * inv_scale" in rewritten


def test_stays_correct(rewritten: str, tmp_path) -> None:
    check_correct({"orig": NORM, "rewritten": rewritten}, tmp_path)


def test_reciprocal_goes_right_before_the_division() -> None:
    simple = task('''
        @triton.jit
        def k(x_ptr, out_ptr, d_ptr, BLOCK: tl.constexpr):
            d = tl.load(d_ptr)
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) / d)
    ''')
    new = rewrite("reciprocal-multiply", simple, "k")[0].source
    assert "    inv_d = 1.0 / d\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * inv_d)\n" in new


def test_declines_divisor_that_changes_between_divisions() -> None:
    source = task('''
        @triton.jit
        def k(x_ptr, out_ptr, d_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            d = 2.0
            for i in range(3):
                tl.store(out_ptr + offs, tl.load(x_ptr + offs) / d)
                d = tl.load(d_ptr + i)
    ''')
    assert "changes between" in declined("reciprocal-multiply", source, "k")


def test_declines_scalar_and_block_divisors() -> None:
    scalar_only = task('''
        @triton.jit
        def k(out_ptr, a, b):
            tl.store(out_ptr, a / b)
    ''')
    assert "no block divided" in declined("reciprocal-multiply", scalar_only, "k")
    block_div = task('''
        @triton.jit
        def k(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            y = tl.load(y_ptr + offs)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) / y)
    ''')
    assert "itself a block" in declined("reciprocal-multiply", block_div, "k")


SOFTCAP = task('''
    M = 4
    N = 200
    TEST_SHAPES = [{"M": 3, "N": 77}]


    @triton.jit
    def capped_kernel(x_ptr, out_ptr, n_cols, softcap, HAS_SOFTCAP: tl.constexpr, BLOCK: tl.constexpr):
        """Liger's cross-entropy pattern: the divisor is only a number where a constexpr flag says so."""
        row = tl.program_id(0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            if HAS_SOFTCAP:
                x = softcap * x / softcap
            tl.store(out_ptr + row * n_cols + cols, x, mask=cols < n_cols)


    class Model(nn.Module):
        def forward(self, x):
            return x


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            capped_kernel[(x.shape[0],)](x, out, x.shape[1], None, HAS_SOFTCAP=False, BLOCK=32)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_reciprocal_stays_under_the_if_that_guards_the_division(tmp_path) -> None:
    # hoisted before the loop, `1.0 / softcap` would run with softcap None (a compile error in Triton's front end)
    new = rewrite("reciprocal-multiply", SOFTCAP, "capped_kernel")[0].source
    assert "            inv_softcap = 1.0 / softcap\n            x = (softcap * x) * inv_softcap" in new
    check_correct({"orig": SOFTCAP, "rewritten": new}, tmp_path)
