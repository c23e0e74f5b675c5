"""Issue 24 item 2: no level 3-4 finding rests on a guess. A finding whose line depends on a guessed constexpr or
type is withheld (one TL002 hint names it and the value to record or pass); one whose line depends on none of the
guesses says it holds for every value of them; an innermost stride nobody shows is compiled as
the constant 1 real launches of contiguous tensors give the JIT."""

from __future__ import annotations

import ast
import textwrap

from tritonlens.analysis.compiler.rests_on import line_inputs
from tritonlens.analysis.core.findings import Finding, Level, Severity, Span
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.strides import innermost_strides
from tritonlens.ascend_runner.protocol import CompileRequest, CompileResult
from tritonlens.server.engine.diagnose import analyze_kernel
from tritonlens.server.engine.diagnose import run as diagnose_run

SOURCE = textwrap.dedent(
    """\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scale_rows(x_ptr, y_ptr, n, stride_xm, stride_xn, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, 128)
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n)
        acc = tl.zeros((BLOCK,), tl.float32)
        tl.store(y_ptr + row * 128 + cols, x, mask=cols < n)


    def run(x, block):
        y = torch.empty((4, 128), dtype=torch.float16, device="cuda")
        x = torch.empty((4, 128), dtype=torch.float16, device="cuda")
        scale_rows[(4,)](x, y, 128, x.stride(0), q.stride(1), BLOCK=block)
        return y
    """
)


def line_of(needle: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), start=1) if needle in text)


class Runner:
    def __init__(self) -> None:
        self.requests: list[CompileRequest] = []

    def compile(self, req: CompileRequest, *, cancel=None, timeout_s=None) -> CompileResult:
        self.requests.append(req)
        return CompileResult(ok=True, target=req.target, stages={"ttir": "module {}"})

    def close(self) -> None:
        pass


def test_each_line_reads_the_parameters_its_assignments_come_from() -> None:
    fn = next(n for n in ast.parse(SOURCE).body if isinstance(n, ast.FunctionDef) and n.name == "scale_rows")
    inputs = line_inputs(fn)
    assert inputs(line_of("x = tl.load")) == {"x_ptr", "stride_xm", "stride_xn", "n"}
    assert inputs(line_of("acc = tl.zeros")) == {"BLOCK"}
    assert inputs(line_of("def scale_rows")) is None  # the def line: not a statement of the body
    assert inputs(line_of("def run")) == frozenset()  # the wrapper: a launch site shows its own values


def test_innermost_strides_by_name() -> None:
    params = ["a_ptr", "stride_am", "stride_ak", "stride_bk", "stride_bn", "x_stride_0", "x_stride_1",
              "row_stride", "in_stride", "out_stride", "stride_qz", "stride_qh", "stride_qm", "stride_qk"]
    assert innermost_strides(params) == {"stride_ak", "stride_bn", "x_stride_1", "stride_qk"}
    assert innermost_strides(["x_ptr", "stride", "n"]) == frozenset()  # a lone stride is a row stride


def test_an_unknown_innermost_stride_is_the_launchers_constant_one() -> None:
    (spec,) = specializations(SOURCE, "scale_rows")  # `q.stride(1)`: an unknown tensor, no visible value
    assert spec.constants["stride_xn"] == 1 and spec.signature["stride_xn"] == "constexpr"
    assert "innermost stride of a contiguous tensor" in spec.provenance["stride_xn"]
    assert spec.signature["stride_xm"] == "i32"  # the row stride stays an unknown multiple of 16
    recorded = [{"kernel": "scale_rows", "signature": {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32",
                                                       "stride_xm": "i32", "stride_xn": "i32"},
                 "constants": {"BLOCK": 128}, "divisibility": ["x_ptr", "y_ptr", "n", "stride_xm"]}]
    (real,) = specializations(SOURCE, "scale_rows", recorded=recorded)
    assert real.signature["stride_xn"] == "i32" and "stride_xn" not in real.constants  # the record's value


def test_a_finding_on_a_guessed_line_is_withheld_and_one_on_a_real_line_holds(monkeypatch) -> None:
    load_line, zeros_line = line_of("x = tl.load"), line_of("acc = tl.zeros")

    def fake_analyze(variant, target, source, kernel, path) -> None:
        variant.findings = [
            Finding("TL305", "a compiler-proven cost", Span(load_line, 4, load_line, 9), Severity.WARNING,
                    Level.COMPILER),
            Finding("TL306", "small tiles", Span(zeros_line, 4, zeros_line, 9), Severity.WARNING, Level.COMPILER),
        ]

    monkeypatch.setattr(diagnose_run, "analyze_output", fake_analyze)
    result = analyze_kernel(SOURCE, "k.py", "scale_rows", "sm_90", Runner())
    by_code = {f.code: f for f in result.findings if f.code != "TL002"}
    assert "TL306" not in by_code  # its line reads BLOCK, which nothing shows (guessed 64)
    kept = by_code["TL305"]
    assert kept.severity == Severity.WARNING  # it rests on no guess: proven on the values shown
    assert "holds for every value of BLOCK" in kept.message
    assert "the sizes and types it quotes are the assumed ones" in kept.message  # its details may differ
    (hint,) = [f for f in result.findings if f.code == "TL002" and "withheld" in f.data]
    assert hint.severity == Severity.HINT
    assert f"TL306 line {zeros_line}" in hint.message and "BLOCK=64" in hint.message
    assert hint.data["insert_text"] == "# tritonlens: BLOCK=<int>"
    # the value given by a pragma-equivalent (pyproject): nothing is guessed, both findings stand as warnings
    pinned = analyze_kernel(SOURCE, "k.py", "scale_rows", "sm_90", Runner(),
                            overrides={"scale_rows": {"BLOCK": 128}})
    shown = {f.code: f.severity for f in pinned.findings if f.code in ("TL305", "TL306")}
    assert shown == {"TL305": Severity.WARNING, "TL306": Severity.WARNING}
    assert not [f for f in pinned.findings if "withheld" in f.data]


KINDS = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def _activate(x, kind):
        if kind == "silu":
            x = x * tl.sigmoid(x)
        return x


    @triton.jit
    def kinds(x_ptr, ACT: tl.constexpr, NORM: tl.constexpr, ACC: tl.constexpr, OUT: tl.constexpr,
              W_nbits: tl.constexpr, SPLIT_K: tl.constexpr):
        offs = tl.arange(0, 128)
        x = tl.load(x_ptr + offs)
        if NORM in ("rms", "layer"):
            x = x * 2
        acc = tl.zeros((128,), ACC) + _activate(x, ACT)
        if OUT == tl.float16:
            acc = acc * 2
        packed = 32 // W_nbits
        tl.store(x_ptr + offs, acc * packed * SPLIT_K)
    """
)


def test_string_and_dtype_constexprs_are_never_guessed_as_ints() -> None:
    from tritonlens.analysis.specialize.findings import specialization_findings

    (spec,) = specializations(KINDS, "kinds")
    assert spec.constants["ACT"] == "silu"  # compared with strings in the jit helper it is passed to
    assert spec.constants["NORM"] == "rms"  # `in` a tuple of strings
    assert spec.constants["ACC"] == "tl.float32"  # the dtype position of tl.zeros
    assert spec.constants["OUT"] == "tl.float32"  # compared with tl.float16
    assert spec.constants["W_nbits"] == 8  # a bit width, not a problem size
    assert spec.constants["SPLIT_K"] == 4  # a count of slices: a few, not a problem size (it was guessed 1024)
    (hint,) = [f for f in specialization_findings(KINDS, "kinds", [spec]) if f.code == "TL002"]
    assert "NORM='<str>'" in hint.data["insert_text"] and "ACC=tl.<dtype>" in hint.data["insert_text"]


def test_a_guessed_element_type_does_not_move_a_finding_blamed_on_a_known_stride() -> None:
    from tritonlens.analysis.compiler.variants import guesses_rested_on

    fn = ast.parse(
        "def k(x_ptr, stride, BLOCK):\n    offs = tl.arange(0, 128)\n    x = tl.load(x_ptr + offs * stride)\n"
    ).body[0]
    guesses = {"x_ptr": "x_ptr as *fp32"}
    blamed = Finding("TL301", "load from `x_ptr`", Span(3, 4, 3, 9), Severity.WARNING, Level.COMPILER,
                     data={"culprit": "stride", "cause": "stride"})
    assert guesses_rested_on(blamed, guesses, line_inputs(fn), {"x_ptr"}) == {}
    unblamed = Finding("TL305", "load from `x_ptr`", Span(3, 4, 3, 9), Severity.WARNING, Level.COMPILER)
    assert guesses_rested_on(unblamed, guesses, line_inputs(fn), {"x_ptr"}) == guesses
    # a finding that does not name the pointer (an index width, a compare) holds for every element type
    other = Finding("TL312", "64-bit index arithmetic", Span(3, 4, 3, 9), Severity.WARNING, Level.COMPILER)
    assert guesses_rested_on(other, guesses, line_inputs(fn), {"x_ptr"}) == {}


def test_the_hint_gives_a_pointer_its_element_type_not_a_value():
    """A finding withheld because a pointer's element type was guessed: the pragma to give it is `x_ptr=*<dtype>`
    (Triton's spelling, e.g. `*bf16`); `x_ptr=<int>` asked for a value the pragma cannot take for a pointer."""
    from tritonlens.analysis.specialize.findings import pragma_text
    from tritonlens.analysis.specialize.kernels import kernel_table

    source = "import triton\nimport triton.language as tl\n\n" + textwrap.dedent(
        """
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)
        """
    )
    info = kernel_table(source).kernels["k"]
    assert pragma_text(info, ["x_ptr", "BLOCK"], pointers={"x_ptr"}) == "# tritonlens: x_ptr=*<dtype>, BLOCK=<int>"
