"""A resource failure (Triton's OutOfResources, Ascend's UB overflow) of a compile that used guessed values names
the guess first ("at the guessed BLOCK_M=256 ...") and never advises reducing block sizes the user did not choose;
it is attributed to the guess and goes into the TL002 hint. At the user's own values the advice stays (issue 24,
Deliver 4). The error texts are the compilers' own: triton/runtime/errors.py's OutOfResources and bishengir's."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from tritonlens.analysis.compiler.outcome import failure_findings
from tritonlens.analysis.compiler.tool_failures import not_analysed_hint, split_tool_failures
from tritonlens.analysis.core.findings import Severity, Span
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ascend" / "hivm"
SOURCE = """import triton
import triton.language as tl
@triton.jit
def k(x_ptr, BLOCK_M: tl.constexpr):
    offs = tl.arange(0, BLOCK_M)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
"""
# str(OutOfResources(262144, 232448, "shared memory")) in Triton 3.6
SHARED = (
    "out of resource: shared memory, Required: 262144, Hardware limit: 232448. Reducing block sizes or "
    "`num_stages` may help."
)


def _variant(message: str, guessed: bool) -> SimpleNamespace:
    provenance = {"BLOCK_M": ASSUMED_TYPICAL, "x_ptr": "pragma at line 3"} if guessed else {"BLOCK_M": "launch at line 9"}
    spec = SimpleNamespace(
        label="guessed values" if guessed else "launch at line 9",
        provenance=provenance,
        constants={"BLOCK_M": 256},
        signature={"x_ptr": "*fp16", "BLOCK_M": "constexpr"},
    )
    error = SimpleNamespace(stage="ttgir", message=message, line=None, col=None)
    return SimpleNamespace(ok=False, errors=[error], specialization=spec, metadata={}, compiler=None)


def _one(message: str, guessed: bool, platform: str = "cuda"):
    (f,) = failure_findings([_variant(message, guessed)], platform, SOURCE, "k", Span(4, 0, 4, 1))
    return f


def test_shared_memory_at_a_guessed_block_names_the_guess_first() -> None:
    f = _one(SHARED, guessed=True)
    assert f.message.startswith("at the guessed BLOCK_M=256")
    assert "out of resource: shared memory, Required: 262144" in f.message  # the compiler's numbers stay
    assert "reduce block sizes" not in f.message.lower() and "reducing block sizes" not in f.message.lower()
    assert f.severity == Severity.INFO and f.data["cause"] == "guess"
    kept, moved = split_tool_failures([f])
    assert not kept and moved and "guess" in moved[0][1]  # not a finding on the user's kernel: the TL002 hint
    # the hint says the failure may be the tool's, never that the code is sure to be fine (a parameter reassigned
    # in a loop fails at any value: microsoft/onnxruntime's GroupNorm, check 3)
    (hint,) = not_analysed_hint(moved, "k", Span(4, 0, 4, 1), "", 4)
    assert "may come from the tool" in hint.message and "not of the code" not in hint.message


def test_a_ub_overflow_at_a_guessed_block_names_the_guess_first() -> None:
    fixture = json.loads((FIXTURES / "ub_overflow-ascend910b3.json").read_text())
    message = next(e["message"] for e in _errors(fixture) if "ub overflow" in e["message"])
    f = _one(message, guessed=True, platform="ascend")
    assert f.code == "TL400" and f.message.startswith("at the guessed BLOCK_M=256")
    assert "requires 4194304 bits while 1572864 bits available" in f.message
    assert "reduce block sizes" not in f.message and f.severity == Severity.INFO


def test_at_the_users_own_values_the_advice_stays() -> None:
    f = _one(SHARED, guessed=False)
    assert not f.message.startswith("at the guessed") and "reduce block sizes" in f.message
    assert f.severity == Severity.ERROR and "cause" not in f.data


def test_a_non_resource_failure_at_guesses_keeps_its_label() -> None:
    f = _one("ValueError: arange's range must be a power of 2", guessed=True)
    assert not f.message.startswith("at the guessed") and "[compiled with assumed BLOCK_M=256" in f.message


def _errors(node: object) -> list[dict]:
    """Every {"message": ...} dict of the fixture, wherever the result nests it."""
    if isinstance(node, dict):
        here = [node] if isinstance(node.get("message"), str) else []
        return here + [e for v in node.values() for e in _errors(v)]
    if isinstance(node, list):
        return [e for v in node for e in _errors(v)]
    return []
