"""TL300: a compile error on a statement that reads none of the guessed values is the kernel's at every launch
(an error, the guesses named as not read); one that reads a guess stays attributed to it (at most INFO). The
message is Triton 3.6's own for an `if` whose branches give a variable two types, which the CPU interpreter runs."""

from __future__ import annotations

from types import SimpleNamespace

from tritonlens.analysis.compiler.failing_statement import guessed_reads
from tritonlens.analysis.compiler.outcome import failure_findings
from tritonlens.analysis.core.findings import Severity, Span

SOURCE = """import triton
import triton.language as tl
@triton.jit
def bag_max(idx_ptr, off_ptr, w_ptr, out_ptr, num_bags, total, D, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    start = tl.load(off_ptr + bag)
    if bag + 1 < num_bags:
        end = tl.load(off_ptr + bag + 1)
    else:
        end = total
    acc = tl.full((BLOCK_D,), float("-inf"), tl.float32)
    for j in range(start, end):
        acc = tl.maximum(acc, tl.load(w_ptr + tl.load(idx_ptr + j) * D + cols, mask=cols < D))
    tl.store(out_ptr + bag * D + cols, acc, mask=cols < D)
"""
MISMATCH = "AssertionError('Mismatched type for end between then block (int64) and else block (int32)')"
GUESSED = {"w_ptr": "*fp32", "out_ptr": "*fp32"}


def _failure(line: int, message: str, provenance: dict[str, str]):
    spec = SimpleNamespace(label="launch at line 20", provenance=provenance,
                           constants={"BLOCK_D": 64}, signature=dict(GUESSED))
    error = SimpleNamespace(stage="frontend", message=message, line=line, col=4)
    variant = SimpleNamespace(ok=False, errors=[error], specialization=spec, metadata={}, compiler=None)
    (f,) = failure_findings([variant], "cuda", SOURCE, "bag_max", Span(4, 0, 4, 1))
    return f


def test_the_statements_reads_follow_the_kernels_assignments() -> None:
    assert guessed_reads(SOURCE, "bag_max", 8, GUESSED) == set()  # the `if`: bag, off_ptr, total
    assert guessed_reads(SOURCE, "bag_max", 14, GUESSED) == {"w_ptr"}
    assert guessed_reads(SOURCE, "bag_max", 15, GUESSED) == {"out_ptr", "w_ptr"}  # acc reads w_ptr's loads
    assert guessed_reads(SOURCE, "bag_max", 4, GUESSED) is None  # the def line: no statement to read
    assert guessed_reads("def broken(:", "bag_max", 8, GUESSED) is None


def test_a_failure_that_reads_no_guess_is_the_kernels_error() -> None:
    assumed = {"w_ptr": "launch at line 20: element type assumed fp32", "out_ptr": "element type assumed fp32"}
    f = _failure(8, MISMATCH, assumed)
    assert f.severity == Severity.ERROR and f.data["reads_assumed"] is False
    assert "reads none of the assumed w_ptr as *fp32, out_ptr as *fp32" in f.message
    assert "branches of the `if` give the variable different types" in f.message
    # the same message on a statement that reads a guessed pointer: the guess may be the cause
    g = _failure(14, MISMATCH, assumed)
    assert g.severity == Severity.INFO and "compiled with assumed" in g.message and "reads_assumed" not in g.data
