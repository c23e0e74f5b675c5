"""TL307 (blind sample 3, docs/precision.md): whether the pipeliner makes a load asynchronous depends on its bytes
per thread, so on the pointer's element type. A TL307 compiled on guessed element types of the pointers its loads
read rests on those guesses (withheld into the TL002 hint); with num_stages <= 1 it holds for every type; a rule
that does not declare the dependency still ignores a type guess it does not name."""

from __future__ import annotations

import ast
import textwrap

from tritonlens.analysis.compiler.rests_on import line_inputs
from tritonlens.analysis.compiler.variants import guesses_rested_on
from tritonlens.analysis.core.findings import Finding, Level, Severity, Span

SOURCE = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
    """
)
TYPE_GUESSES = {"a_ptr": "a_ptr=*fp32", "b_ptr": "b_ptr=*fp32", "c_ptr": "c_ptr=*fp32"}


def line_of(needle: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), start=1) if needle in text)


def tl307(**data: object) -> Finding:
    loop = line_of("for k in range")
    loads = [line_of("a = tl.load"), line_of("b = tl.load")]
    return Finding("TL307", "The loop's 2 global load(s) stay synchronous", Span(loop, 4, loop, 30),
                   Severity.WARNING, Level.COMPILER, data={"load_lines": loads, **data})


def inputs():
    fn = next(n for n in ast.parse(SOURCE).body if isinstance(n, ast.FunctionDef))
    return line_inputs(fn)


def test_tl307_rests_on_the_guessed_types_of_the_pointers_its_loads_read() -> None:
    rests = guesses_rested_on(tl307(rests_on_loads=True), TYPE_GUESSES, inputs(), typed=set(TYPE_GUESSES))
    assert set(rests) == {"a_ptr", "b_ptr"}  # the stored pointer is not loaded in the loop


def test_tl307_for_num_stages_one_holds_for_every_type() -> None:
    assert guesses_rested_on(tl307(rests_on_loads=False), TYPE_GUESSES, inputs(), typed=set(TYPE_GUESSES)) == {}


def test_real_types_leave_tl307_standing() -> None:
    # no guesses at all (a recorded launch): nothing to rest on, the compiler-proven warning stands
    assert guesses_rested_on(tl307(rests_on_loads=True), {}, inputs(), typed=set()) == {}


def test_a_rule_without_the_load_dependency_ignores_an_unnamed_type_guess() -> None:
    other = Finding("TL306", "mma.sync", tl307().span, Severity.INFO, Level.COMPILER,
                    data={"load_lines": tl307().data["load_lines"]})
    assert guesses_rested_on(other, TYPE_GUESSES, inputs(), typed=set(TYPE_GUESSES)) == {}
