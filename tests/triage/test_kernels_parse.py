"""parse_module on tricky inputs: aliases, decorators, helpers, launches, unicode, broken and non-Triton text."""

from __future__ import annotations

import random
import textwrap

import pytest
from triage_helpers import EXAMPLES, locate

from tritonlens.analysis.core.findings import Span
from tritonlens.analysis.kernels import parse_module

ALIASES = """
import triton as tr
import triton.language as lang
from triton import jit, autotune as at, Config as Cfg, heuristics

@jit
def _square(x):
    return x * x

@tr.jit
def _twice(x):
    return _square(x) + _square(x)

CONFIGS = [Cfg({"BLOCK": 128}, num_warps=4), Cfg({"BLOCK": 256}, 8, 3)]

@at(configs=CONFIGS, key=["n"], warmup=5)
@heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tr.jit(do_not_specialize=["n"], debug=False)
def kern(x_ptr, n, BLOCK: lang.constexpr, EVEN: "lang.constexpr" = False, *, scale=1.5):
    offs = tr.language.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    lang.store(x_ptr + offs, _twice(lang.load(x_ptr + offs)))

def run(x):
    grid = (4, 1)
    kern[grid](x, x.numel())
    kern[(1024,)](x, n=10, num_warps=2)
"""


def test_aliases_decorators_and_helpers() -> None:
    m = parse_module(textwrap.dedent(ALIASES))
    assert m.syntax_error is None
    assert [k.name for k in m.kernels] == ["kern"]
    assert [h.name for h in m.helpers] == ["_square", "_twice"]
    kern = m.kernel("kern")
    assert kern.calls == ("_twice",) and kern.helpers == ("_twice", "_square")
    assert kern.launched and not kern.is_helper
    assert kern.jit_kwargs == {"do_not_specialize": ["n"], "debug": False}
    assert kern.heuristics == {"EVEN": 'lambda args: args["n"] % args["BLOCK"] == 0'}
    assert kern.autotune_key == ["n"]
    assert kern.autotune_configs == [
        {"kwargs": {"BLOCK": 128}, "num_warps": 4},
        {"kwargs": {"BLOCK": 256}, "num_warps": 8, "num_stages": 3},
    ]
    assert kern.autotune.configs_literal and kern.autotune.options == {"warmup": "5"}
    assert m.resolve(kern.node.body[0].value.left.left.func) == "triton.language.program_id"


def test_params() -> None:
    kern = parse_module(textwrap.dedent(ALIASES)).kernel("kern")
    by_name = {p.name: p for p in kern.params}
    assert list(by_name) == ["x_ptr", "n", "BLOCK", "EVEN", "scale"]
    assert [p.is_constexpr for p in kern.params] == [False, False, True, True, False]
    assert by_name["BLOCK"].annotation == "lang.constexpr"
    assert by_name["EVEN"].annotation == '"lang.constexpr"'
    assert by_name["EVEN"].has_default and by_name["EVEN"].default is False
    assert by_name["scale"].kind == "keyword_only" and by_name["scale"].default == 1.5
    assert by_name["x_ptr"].default is None and not by_name["x_ptr"].has_default
    src = textwrap.dedent(ALIASES)
    assert by_name["EVEN"].span == Span(
        locate(src, "EVEN: ").line,
        locate(src, "EVEN: ").col,
        locate(src, "False, *").line,
        locate(src, "False, *").col + 5,
    )
    block = locate(src, "BLOCK: lang")
    assert by_name["BLOCK"].name_span == Span(block.line, block.col, block.line, block.col + len("BLOCK"))


def test_kernel_spans() -> None:
    src = textwrap.dedent(ALIASES)
    kern = parse_module(src).kernel("kern")
    deco = locate(src, "@at(")
    assert (kern.span.line, kern.span.col) == (deco.line, 0)
    assert kern.name_span == locate(src, "kern", 1)
    assert kern.def_span.line == locate(src, "def kern").line
    assert kern.span.end_line == locate(src, "lang.store").line


def test_launch_sites() -> None:
    m = parse_module(textwrap.dedent(ALIASES))
    first, second = m.launches
    assert first.kernel == "kern" and first.function == "run"
    assert first.grid_text == "grid" and first.grid_value is None
    assert first.grid_resolved_text == "(4, 1)" and first.grid_resolved_value == (4, 1)
    assert [a.text for a in first.args] == ["x", "x.numel()"]
    assert second.grid_value == (1024,)
    assert second.kwarg("n").value == 10 and second.kwarg("n").has_literal
    assert second.kwarg("num_warps").value == 2
    bound = second.bind(m.kernel("kern"))
    assert set(bound) == {"x_ptr", "n"} and bound["n"].value == 10


CHOSEN = """
import triton
import triton.language as tl

@triton.jit
def fwd_a(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

@triton.jit
def fwd_b(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 2.0)

def run(x, fast):
    kernel = fwd_a if fast else fwd_b  # one launch, either kernel
    kernel[(1,)](x, x.numel(), BLOCK=256)

def plain(x):
    fn = fwd_b
    fn[(2,)](x, 4, BLOCK=128)

def unrelated(x):
    kernel = x.numel
    kernel[0]  # a subscript, not a kernel's launch
"""


def test_launches_through_a_local_name_for_a_kernel() -> None:
    # DeepSpeed's `kernel = a if cond else b; kernel[grid](...)` (check 3): the launch was not followed, and the
    # kernels were compiled at guessed values
    m = parse_module(CHOSEN)
    a, b = m.launches_of("fwd_a"), m.launches_of("fwd_b")
    assert [(s.through, s.shared_by, s.kwarg("BLOCK").value) for s in a] == [("kernel", ("fwd_a", "fwd_b"), 256)]
    assert [(s.through, s.shared_by, s.kwarg("BLOCK").value) for s in b] == [
        ("kernel", ("fwd_a", "fwd_b"), 256), ("fn", ("fwd_b",), 128)]
    assert m.kernel("fwd_a").launched and m.kernel("fwd_b").launched


def test_unicode_before_a_kernel_uses_character_columns() -> None:
    src = '# café ☕ naïve\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):  # π\n    y = "é" + "ü"; tl.store(x, 1)\n'
    m = parse_module(src)
    (k,) = m.kernels
    assert k.name_span == Span(6, 4, 6, 5)
    store = k.node.body[0].value
    # `tl.store` starts after 'y = "é" + "ü"; ' which is 16 characters (20 UTF-8 bytes).
    call = k.node.body[1].value
    assert m.span_of(call) == Span(7, 19, 7, 33)
    assert m.text_of(store) == '"é" + "ü"'


def test_bom_and_crlf_and_lone_cr() -> None:
    src = "\ufeffimport triton\r\n\r\n@triton.jit\r\ndef k(x):\r\n    pass\r\nk[(2,)](1)\r\n"
    m = parse_module(src)
    assert [k.name for k in m.kernels] == ["k"] and m.kernels[0].name_span == Span(4, 4, 4, 5)
    assert m.launches[0].grid_value == (2,)
    m = parse_module("import triton\r@triton.jit\rdef k(x):\r    pass\r")
    assert m.kernels[0].name_span == Span(3, 4, 3, 5)


def test_kernels_nested_in_functions_and_classes() -> None:
    src = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        def test_add():
            @triton.jit
            def add_kernel(x, BLOCK: tl.constexpr):
                tl.store(x + tl.arange(0, BLOCK), 1.0)
            add_kernel[(1,)](x, BLOCK=16)

        class Ops:
            @staticmethod
            @triton.jit
            def inner(x):
                pass
        """
    )
    m = parse_module(src)
    assert [(k.name, k.qualname) for k in m.kernels] == [
        ("add_kernel", "test_add.<locals>.add_kernel"),
        ("inner", "Ops.inner"),
    ]
    assert m.launches[0].function == "test_add" and m.kernel("add_kernel").launched


def test_import_forms_without_alias_and_missing_imports() -> None:
    m = parse_module(
        "import triton.language\nimport triton\n@triton.jit\ndef k(x, B: triton.language.constexpr):\n    pass\n"
    )
    assert m.kernel("k").params[1].is_constexpr
    # A snippet pasted without imports still reads the conventional names.
    m = parse_module("@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n")
    assert m.kernel("k").params[1].is_constexpr
    # But a module that binds `triton` to something else is not Triton.
    m = parse_module("import mylib as triton\n@triton.jit\ndef k(x):\n    pass\n")
    assert not m.kernels


def test_helper_launched_directly_is_also_a_kernel() -> None:
    src = "import triton\n@triton.jit\ndef h(x):\n    pass\n@triton.jit\ndef k(x):\n    h(x)\nh[(1,)](1)\nk[(1,)](1)\n"
    m = parse_module(src)
    assert [k.name for k in m.kernels] == ["h", "k"] and not m.helpers
    assert m.kernel("k").helpers == ("h",)


def test_recursive_helpers_terminate() -> None:
    src = "import triton\n@triton.jit\ndef a(x):\n    return b(x)\n@triton.jit\ndef b(x):\n    return a(x)\n"
    m = parse_module(src)
    assert {k.name: k.helpers for k in m.functions} == {"a": ("b",), "b": ("a",)}


def test_computed_autotune_configs_are_marked_incomplete() -> None:
    src = textwrap.dedent(
        """
        import triton
        @triton.autotune(configs=[triton.Config({"B": b}) for b in (64, 128)], key=[])
        @triton.jit
        def k(x, B: "tl.constexpr"):
            pass
        """
    )
    k = parse_module(src).kernel("k")
    assert k.autotune is not None and not k.autotune.configs_literal and k.autotune_configs == []
    assert "for b in" in k.autotune.configs_text


@pytest.mark.parametrize(
    ("source", "line", "col"),
    [
        ("@triton.jit\ndef k(x:\n", 2, 5),
        ("x = 'é' + (", 1, 10),
        ("é = 1\nif é ==:\n  pass", 2, 7),
    ],
)
def test_syntax_errors_are_reported_with_character_columns(source: str, line: int, col: int) -> None:
    m = parse_module(source)
    assert m.syntax_error is not None
    assert (m.syntax_error.line, m.syntax_error.col) == (line, col)
    assert m.syntax_error.span.end_col > m.syntax_error.col or m.syntax_error.span.end_line > line
    assert not m.kernels and not m.launches


@pytest.mark.parametrize(
    "source",
    [
        "",
        "\n\n",
        "a\x00b",
        "(" * 500 + ")" * 500,
        "x = " + "[" * 10000,
        "\udcff\udcfe = 1",
        "def f():\n\treturn 1\n        ",
    ],
)
def test_never_raises_on_odd_text(source: str) -> None:
    m = parse_module(source)
    assert not m.kernels


def test_non_triton_python_has_no_kernels() -> None:
    src = "import functools\n@functools.lru_cache\ndef jit(x):\n    return x\n@jit\ndef f(a):\n    return a[1](2)\n"
    m = parse_module(src)
    assert not m.kernels and not m.launches and m.syntax_error is None


def test_never_raises_on_every_prefix_of_the_examples() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for cut in range(0, len(text), 7):
            parse_module(text[:cut])


def test_never_raises_on_random_bytes() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        parse_module(raw.decode("utf-8", errors="surrogateescape"))
        parse_module(raw.decode("latin-1"))


def test_constexpr_imported_by_name_and_imports_inside_try() -> None:
    src = textwrap.dedent(
        """
        try:
            import triton
            from triton.language import constexpr, arange as ar
        except ImportError:
            triton = None

        @triton.jit
        def k(x, B: constexpr):
            tl_offsets = ar(0, B)
        """
    )
    m = parse_module(src)
    (k,) = m.kernels
    assert k.params[1].is_constexpr
    call = k.node.body[0].value
    assert m.resolve(call.func) == "triton.language.arange"
