"""Bad input never crashes specialization, and the tiny evaluator never runs user code."""

from __future__ import annotations

import ast

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.source.safe_eval import UNKNOWN, evaluate
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.findings import specialization_findings

KERNEL = """import triton
import triton.language as tl

@triton.jit
def k(x_ptr, B: tl.constexpr = 16):
    tl.store(x_ptr + tl.arange(0, B), 1.0)
"""


@pytest.mark.parametrize(
    "source",
    [
        "",
        "def f(:\n",
        "import triton\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    tl.store(x_ptr + ",
        "print('hello')\n",
        "\x00\x01garbage\ufffd",
        "@triton.jit\ndef k(*args, **kwargs):\n    pass\nk[(1,)](*xs, **kw)\n",
        "@triton.jit\ndef k(a, b):\n    a = a + b\n    b = b + a\n    tl.load(a)\nk[1](x, y)\nx = x\ny = y + x\n",
    ],
)
def test_never_raises(source: str) -> None:
    specs = specializations(source, "k")
    specialization_findings(source, "k", specs)


def test_accepts_module_info() -> None:
    module = parse_module(KERNEL)
    (spec,) = specializations(module, "k")
    assert spec.constants == {"B": 16}
    assert specializations(module, "missing") == []


def test_bad_pragma_in_half_typed_code_is_tolerated() -> None:
    source = "# tritonlens: B=(1,\n" + KERNEL
    (spec,) = specializations(source, "k")
    assert spec.constants == {"B": 16}


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('echo hacked')",
        "open('/etc/passwd').read()",
        "(lambda: 1)()",
        "10 ** 10 ** 10",
        "1 << 10000",
        "args['x'].numel()",
        "x.max()",
    ],
)
def test_evaluator_refuses_code(expr: str) -> None:
    assert evaluate(ast.parse(expr, mode="eval").body, {"x": 3}, "args") is UNKNOWN


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("args['N'] % args['BLOCK'] == 0", True),
        ("triton.next_power_of_2(args['N'])", 1024),
        ("triton.cdiv(args['N'], 128)", 8),
        ("max(args['BLOCK'] // 4, 1) if args['N'] > 0 else 0", 64),
        ("args.get('MISSING', 7) + 1", 8),
        ("not (args['N'] >= 1024 and args['BLOCK'] < 8)", True),
    ],
)
def test_evaluator_computes_simple_lambdas(expr: str, expected: object) -> None:
    assert evaluate(ast.parse(expr, mode="eval").body, {"N": 1024, "BLOCK": 256}, "args") == expected
