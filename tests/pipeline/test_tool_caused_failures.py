"""A compile failure the tool caused (a guessed pointer type that the code then uses as a length, a stand-in) is
not a TL300 on the user's kernel: one TL002 hint lists what was not analysed and why. Failures of the code itself
(an API the installed Triton lacks, a non-constexpr global) stay findings, guessed compile or not."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.core.findings import Severity
from tritonlens.ascend_runner.protocol import CompileRequest, CompileResult, StageError
from tritonlens.server.engine.diagnose import analyze_kernel

SOURCE = textwrap.dedent(
    """\
    import triton
    import triton.language as tl

    LIMIT = 4


    @triton.jit
    def reduce_kernel(out_ptr, lens_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        length = tl.load(lens_ptr + pid)
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + pid * BLOCK + offs, 1.0, mask=offs < LIMIT)


    def launch(out, lens):
        reduce_kernel[(lens.numel(),)](out, lens, BLOCK=128)
    """
)


class Runner:
    def __init__(self, message: str, line: int) -> None:
        self.message, self.line = message, line

    def compile(self, req: CompileRequest, *, cancel=None, timeout_s=None) -> CompileResult:
        return CompileResult(ok=False, target=req.target, errors=[StageError("frontend", self.message, self.line, 4)])

    def close(self) -> None:
        pass


def line_of(text: str) -> int:
    return next(i for i, ln in enumerate(SOURCE.splitlines(), 1) if text in ln)


def analyze(message: str, line: int):
    return analyze_kernel(SOURCE, "k.py", "reduce_kernel", "sm_90", Runner(message, line))


def test_type_error_on_a_line_reading_a_guessed_pointer_is_the_tools() -> None:
    result = analyze("TypeError('unexpected type fp32')", line_of("length = tl.load"))
    assert not [f for f in result.findings if f.code == "TL300"]
    (hint,) = [f for f in result.findings if "not_analysed" in f.data]
    assert hint.code == "TL002" and hint.severity == Severity.HINT
    assert "lens_ptr as *fp32" in hint.message and "unexpected type fp32" in hint.message
    assert "out_ptr" not in hint.message.split("):")[0]  # the failing line does not read out_ptr


def test_missing_api_stays_a_finding() -> None:
    result = analyze(
        "AttributeError(\"module 'triton.language.math' has no attribute 'max'\")", line_of("length = tl.load")
    )
    (error,) = [f for f in result.findings if f.code == "TL300"]
    assert error.data["cause"] == "missing_api"
    assert not [f for f in result.findings if "not_analysed" in f.data]


def test_a_non_constexpr_global_stays_a_finding() -> None:
    message = "NameError('Cannot access global variable LIMIT from within @jit\\'ed function.')"
    result = analyze(message, line_of("tl.store("))
    (error,) = [f for f in result.findings if f.code == "TL300"]
    assert error.span.line == line_of("tl.store(")
    assert not [f for f in result.findings if "not_analysed" in f.data]
