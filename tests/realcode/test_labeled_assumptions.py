"""Nothing recorded, nothing shown: levels 3-4 compile the most likely variant; a finding that rests on the guess is
not shown (a TL002 hint names it and offers to record real launches), and nothing of a guessed compile is above
info."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.compiler import variants as variant_findings
from tritonlens.analysis.core.findings import Finding, Level, Severity, Span
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.guess import typical_value
from tritonlens.ascend_runner.protocol import CompileRequest, CompileResult, StageError
from tritonlens.server.engine.diagnose import analyze_kernel
from tritonlens.server.engine.diagnose import run as diagnose_run

SOURCE = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def act_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr, ACTIVATION: tl.constexpr,
                   HAS_BIAS: tl.constexpr, OUT_DTYPE: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offs, mask=offs < n)
        if ACTIVATION == "leaky_relu":
            x = tl.where(x > 0, x, 0.01 * x)
        if HAS_BIAS:
            x += 1
        tl.store(y_ptr + offs, x.to(OUT_DTYPE), mask=offs < n)
    """
)


class Runner:
    def __init__(self, make) -> None:
        self.make = make
        self.requests: list[CompileRequest] = []

    def compile(self, req: CompileRequest, *, cancel=None, timeout_s=None) -> CompileResult:
        self.requests.append(req)
        return self.make(req)

    def close(self) -> None:
        pass


def test_typical_values_follow_how_the_body_uses_each_name() -> None:
    (spec,) = specializations(SOURCE, "act_kernel")
    assert spec.constants == {
        "BLOCK_SIZE": 64,
        "ACTIVATION": "leaky_relu",
        "HAS_BIAS": False,
        "OUT_DTYPE": "tl.float32",
        "GROUP_SIZE_M": 8,
    }
    assert spec.signature["x_ptr"] == "*fp32" and "element type assumed fp32" in spec.provenance["x_ptr"]


def test_a_compile_error_of_a_guessed_variant_is_labeled_info() -> None:
    def fail(req: CompileRequest) -> CompileResult:
        return CompileResult(ok=False, target=req.target, errors=[StageError("frontend", "boom", 12, 4)])

    result = analyze_kernel(SOURCE, "k.py", "act_kernel", "sm_90", Runner(fail))
    assert not [f for f in result.findings if f.code == "TL300"]  # line 12 reads guessed BLOCK_SIZE, ACTIVATION
    (hint,) = [f for f in result.findings if f.code == "TL002" and "not_analysed" in f.data]
    assert hint.severity == Severity.HINT and "tritonlens record" in hint.message
    assert "BLOCK_SIZE=64" in hint.message and "ACTIVATION=" in hint.message
    assert "x_ptr as *fp32" not in hint.message  # a guessed element type cannot cause an error about no type
    (moved,) = hint.data["not_analysed"]
    assert moved["code"] == "TL300" and moved["line"] == 12
    assert moved["assumed_values"]["OUT_DTYPE"] == "OUT_DTYPE='tl.float32'"


def test_a_compile_error_that_no_guess_reaches_stays_a_finding() -> None:
    # line 9 reads only n and BLOCK_SIZE; pinned by a pragma, the error is the code's own
    source = SOURCE.replace("@triton.jit", "# tritonlens: BLOCK_SIZE=100\n@triton.jit")
    line = source.splitlines().index("    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)") + 1

    def fail(req: CompileRequest) -> CompileResult:
        return CompileResult(
            ok=False, target=req.target, errors=[StageError("frontend", "arange's range must be a power of 2", line, 4)]
        )

    result = analyze_kernel(source, "k.py", "act_kernel", "sm_90", Runner(fail))
    (error,) = [f for f in result.findings if f.code == "TL300"]
    assert error.span.line == line
    assert not [f for f in result.findings if "not_analysed" in f.data]


def test_a_finding_resting_on_the_guess_is_withheld_and_named_by_the_hint(monkeypatch) -> None:
    def fake_analyze(variant, target, source, kernel, path) -> None:
        variant.findings = [
            Finding(
                "TL305", "an error-level compiler finding", Span(9, 4, 9, 10), Severity.ERROR, Level.COMPILER
            )
        ]

    monkeypatch.setattr(diagnose_run, "analyze_output", fake_analyze)
    ok = Runner(lambda req: CompileResult(ok=True, target=req.target, stages={"ttir": "module {}"}))
    result = analyze_kernel(SOURCE, "k.py", "act_kernel", "sm_90", ok)
    assert not [f for f in result.findings if f.code == "TL305"]  # line 9 reads BLOCK_SIZE, a guess
    (hint,) = [f for f in result.findings if f.code == "TL002" and "withheld" in f.data]
    assert hint.severity == Severity.HINT and "TL305 line 9" in hint.message and "BLOCK_SIZE=64" in hint.message
    assert hint.data["withheld"][0]["rests_on"] == ["BLOCK_SIZE"]
    assert "# tritonlens: BLOCK_SIZE=<int>" in hint.data["insert_text"]
    # a recorded launch is a fact: the same finding keeps its severity and carries no label
    recorded = [
        {
            "kernel": "act_kernel",
            "signature": {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32"},
            "constants": {
                "BLOCK_SIZE": 128,
                "ACTIVATION": "",
                "HAS_BIAS": True,
                "OUT_DTYPE": "tl.float16",
                "GROUP_SIZE_M": 8,
            },
            "divisibility": ["x_ptr", "y_ptr"],
        }
    ]
    result = analyze_kernel(SOURCE, "k.py", "act_kernel", "sm_90", ok, recorded=recorded)
    (finding,) = [f for f in result.findings if f.code == "TL305"]
    assert finding.severity == Severity.ERROR and "assumed" not in finding.message
    assert not [f for f in result.findings if f.code == "TL002"]


def test_flags_by_name_and_plain_ints() -> None:
    import ast

    fn = ast.parse("def k(EVEN_K, N_COLS, num_stages):\n    pass\n").body[0]
    assert typical_value(fn, "EVEN_K") is False
    assert typical_value(fn, "N_COLS") == 1024  # a problem size: a multiple of every usual block size
    assert typical_value(fn, "num_stages") == 2


def test_a_tensor_descriptor_argument_is_a_labeled_descriptor_not_an_int() -> None:
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def copy_kernel(in_desc, out_desc, BLOCK_M: tl.constexpr):
            m = tl.program_id(0) * BLOCK_M
            out_desc.store([m, 0], in_desc.load([m, 0]))
        """
    )
    (spec,) = specializations(source, "copy_kernel")
    assert spec.signature["in_desc"] == "tensordesc<fp16[64, 64]>"
    assert variant_findings.variant_guesses(spec)["out_desc"] == "out_desc as tensordesc<fp16[64, 64]>"
