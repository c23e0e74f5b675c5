"""An enum-like constexpr (compared only for equality with constants, literals or module names such as
`_MODE_LLAMA = tl.constexpr(0)`) is guessed as one of its cases, labeled with the cases, never as a size."""

from __future__ import annotations

import ast
import textwrap

from tritonlens.analysis.compiler.variants import variant_guesses
from tritonlens.analysis.specialize.cases import compared_cases, visible_constant
from tritonlens.analysis.specialize.choose import assumed_constexprs, specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL

SOURCE = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    _MODE_NONE: tl.constexpr = tl.constexpr(-1)
    _MODE_LLAMA: tl.constexpr = tl.constexpr(0)
    _MODE_GEMMA = 1
    _ACT_RELU = "relu"


    @triton.jit
    def norm_kernel(x_ptr, n, mode: tl.constexpr, act: tl.constexpr, N_COLS: tl.constexpr,
                    BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N_COLS)
        if mode == _MODE_GEMMA:
            x = x * 2.0
        elif mode == _MODE_LLAMA:
            x = x.to(tl.float32)
        if mode != _MODE_NONE:
            x = x + 1.0
        if act == _ACT_RELU:
            x = tl.maximum(x, 0.0)
        tl.store(x_ptr + offs, x, mask=offs < n)
    """
)


def _kernel(source: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))


def test_selector_guess_is_one_of_its_cases_and_says_which() -> None:
    spec = specializations(SOURCE, "norm_kernel")[0]
    assert spec.constants["mode"] == 0  # not 1024: the nearest-zero case, a branch the kernel has
    assert spec.constants["act"] == "relu"
    assert spec.constants["N_COLS"] == 1024 and spec.constants["BLOCK"] == 64  # sizes stay sizes
    assert spec.provenance["mode"].startswith(ASSUMED_TYPICAL)
    assert "_MODE_GEMMA=1, _MODE_LLAMA=0, _MODE_NONE=-1" in spec.provenance["mode"]
    assert assumed_constexprs(spec)["mode"] == 0
    label = variant_guesses(spec)["mode"]
    assert label.startswith("mode=0 (one of the values the kernel compares it with (_MODE_GEMMA=1"), label
    assert spec.provenance["N_COLS"] == ASSUMED_TYPICAL
    tl002 = specialization_findings(SOURCE, "norm_kernel", [spec])[0]
    assert "mode=0 (one of the values the kernel compares it with (_MODE_GEMMA=1" in tl002.message
    assert "N_COLS=1024," in tl002.message  # a size's guess has no such note


def test_a_size_or_hidden_value_is_no_selector() -> None:
    tree = ast.parse(SOURCE)
    env = {
        s.target.id if isinstance(s, ast.AnnAssign) else s.targets[0].id: s.value
        for s in tree.body
        if isinstance(s, (ast.Assign, ast.AnnAssign))
    }
    fn = _kernel(SOURCE)
    assert compared_cases(fn, "mode", env) == [(1, "_MODE_GEMMA"), (0, "_MODE_LLAMA"), (-1, "_MODE_NONE")]
    assert compared_cases(fn, "N_COLS", env) == []  # used in `offs < N_COLS`: a size
    assert compared_cases(fn, "mode", {}) == []  # the module does not show the compared names' values
    other = SOURCE.replace("x = x * 2.0", "x = x * mode")  # also used as a number: not a selector
    assert compared_cases(_kernel(other), "mode", env) == []
    literal = SOURCE.replace("mode == _MODE_GEMMA", "mode == 3").replace("mode == _MODE_LLAMA", "mode == 2")
    literal = literal.replace("mode != _MODE_NONE", "mode != 3")
    assert compared_cases(_kernel(literal), "mode", {}) == [(3, "3"), (2, "2")]
    assert specializations(literal, "norm_kernel")[0].constants["mode"] == 2
    assert visible_constant(ast.parse("tl.constexpr(-2)", mode="eval").body) == -2


HELPER = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def _activate(x, ACTIVATION: tl.constexpr):
        if ACTIVATION == "gelu":
            x = x * 0.5
        elif ACTIVATION == "relu":
            x = tl.maximum(x, 0.0)
        return x


    @triton.jit
    def _scaled(x, WIDTH: tl.constexpr):
        return x * WIDTH


    @triton.jit
    def act_kernel(x_ptr, ACTIVATION: tl.constexpr, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = _activate(tl.load(x_ptr + offs), ACTIVATION=ACTIVATION)
        tl.store(x_ptr + offs, _scaled(x, WIDTH))
    """
)


def test_selector_passed_to_a_helper_takes_the_helpers_cases() -> None:
    spec = specializations(HELPER, "act_kernel")[0]
    assert spec.constants["ACTIVATION"] == "gelu"  # the helper's first case, not a number
    assert "'gelu', 'relu'" in spec.provenance["ACTIVATION"]
    assert spec.constants["WIDTH"] == 64  # the helper multiplies by it: a size, guessed as before
    assert spec.provenance["WIDTH"] == ASSUMED_TYPICAL
