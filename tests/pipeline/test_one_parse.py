"""Issue 8: one escalation parses the buffer once.

What a save runs for a document version (level 1 on the version, the recompile check, the kernels worth
compiling, specialization, the compile-cache key, the compile, the compiler analysis, merging) must reach the
text through the one memoised parse, `analysis.kernels.parse_module`. Counted two ways: calls of the parse
itself (`analysis.kernels.parse.build_module`) and every `ast.parse` of the whole buffer in this process. The
runner answers with a committed compile of the kernel (tests/fixtures), keyed as the local runner keys its
cache, so the compiler analysis runs on real output.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tritonlens.analysis.core.escalation import merge
from tritonlens.analysis.kernels import parse as kernels_parse
from tritonlens.analysis.state.session import Session
from tritonlens.analysis.triage import triage
from tritonlens.ascend_runner.cache import compile_key
from tritonlens.ascend_runner.protocol import CompileRequest, CompileResult
from tritonlens.server.engine.diagnose import analyze_kernel, compile_inputs_digest, launchable_kernels

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases

from cuda_cases import load_case  # noqa: E402


class FixtureRunner:
    """Answers a compile of `kernel` with one committed compile; computes the key LocalRunner caches under."""

    def __init__(self, kernel: str, result: dict[str, Any]) -> None:
        self.kernel = kernel
        self.result = result
        self.keys: list[str] = []

    def compile(
        self, req: CompileRequest, *, cancel=None, timeout_s=None, function_sources=None
    ) -> CompileResult:
        assert req.kernel == self.kernel
        self.keys.append(compile_key(req, "fixture", function_sources))
        return CompileResult(ok=True, target=req.target, compiler="fixture", **self.result)

    def close(self) -> None:
        pass


class ParseCounter:
    """Counts the one parse function's calls and every `ast.parse` of exactly `text`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
        self.builds = 0
        self.whole_text_parses = 0
        real_build, real_parse = kernels_parse.build_module, ast.parse

        def build(source: str):
            self.builds += source == text
            return real_build(source)

        def parse(source, *args, **kwargs):
            self.whole_text_parses += source == text
            return real_parse(source, *args, **kwargs)

        monkeypatch.setattr(kernels_parse, "build_module", build)
        monkeypatch.setattr(ast, "parse", parse)


def escalate(path: Path, text: str, kernel: str, target: str, runner: FixtureRunner) -> list:
    """The steps of one save-time escalation of `kernel`, in the order the language server runs them."""
    level1 = triage(text, str(path)).findings  # the version's diagnostics before the save
    assert kernel in launchable_kernels(text)
    assert compile_inputs_digest(text, str(path), kernel) is not None  # "did this kernel's inputs change?"
    analysis = analyze_kernel(text, str(path), kernel, target, runner)
    assert analysis.error is None, analysis.error
    assert analysis.variants and all(v.ok for v in analysis.variants)
    return merge([*(f for f in level1 if f.kernel == kernel), *analysis.findings])


@pytest.fixture(autouse=True)
def _cold() -> Iterator[None]:
    with Session().active():  # fresh caches: nothing parsed yet
        yield


def test_a_cuda_escalation_parses_the_buffer_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    case = load_case("rmsnorm_rows_naive")
    path = tmp_path / Path(case.meta["corpus"]).name
    path.write_text(case.source)
    runner = FixtureRunner(
        case.kernel, {"stages": case.stages, "metadata": case.meta["metadata"], "resources": case.resources}
    )
    counter = ParseCounter(monkeypatch, case.source)
    merged = escalate(path, case.source, case.kernel, "sm_90", runner)
    assert runner.keys  # the compile-cache key was computed
    assert any(f.code == "TL314" and f.data.get("confirms") == ["TL106"] for f in merged)  # analysis ran
    assert counter.builds == 1
    assert counter.whole_text_parses == 1


def test_an_ascend_escalation_parses_the_buffer_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fixtures = ROOT / "tests" / "fixtures" / "ascend"
    meta = json.loads((fixtures / "gather.json").read_text())
    req = meta["request"]
    source = (ROOT / req["path"]).read_text()
    stages = {s: (fixtures / f"gather.{s}").read_text() for s in ("ttir", "ttadapter")}
    path = tmp_path / Path(req["path"]).name
    path.write_text(source)
    runner = FixtureRunner(
        req["kernel"], {"stages": stages, "metadata": meta["metadata"], "resources": meta["resources"]}
    )
    counter = ParseCounter(monkeypatch, source)
    merged = escalate(path, source, req["kernel"], req["target"], runner)
    assert runner.keys
    # the Ascend analysis ran on the buffer: TL4xx findings, shown or withheld as resting on a guess (TL002)
    withheld = [w["code"] for f in merged for w in f.data.get("withheld") or []]
    assert any(code.startswith("TL4") for code in [f.code for f in merged] + withheld)
    assert counter.builds == 1
    assert counter.whole_text_parses == 1


def test_the_counter_sees_a_second_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count is not blind: a parse the memo cannot serve (another text, or a cleared memo) is counted."""
    case = load_case("rmsnorm_rows_naive")
    counter = ParseCounter(monkeypatch, case.source)
    triage(case.source)
    with Session().active():  # cold caches: nothing parsed, no chunk seen
        triage(case.source)
    assert counter.builds == 2 and counter.whole_text_parses == 2
