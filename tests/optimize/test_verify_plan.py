"""A candidate's verification plan (replayed launches with their launch-site overrides, or the refusal, and the
verify request) is worked out once per candidate; the editor's kernel argument restricts the candidates to that
kernel; the proposers of the editor, `tritonlens optimize` and `tritonlens bench` come from one function. A scripted
runner stands in for the runner (no compile, no GPU): only the loop's bookkeeping is under test."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tritonlens.analysis.rewrite.model import Candidate, RecipeContext, Verdict
from tritonlens.ascend_runner.protocol import VerifyRequest
from tritonlens.server.engine.optimize import loop, replay_overrides
from tritonlens.server.engine.optimize.config_search import ConfigSearch
from tritonlens.server.engine.optimize.gate import GateConfig
from tritonlens.server.engine.optimize.loop import Budget, OptimizeOptions, optimize_source
from tritonlens.server.engine.optimize.proposer_set import build_proposers
from tritonlens.server.engine.optimize.proposers import RecipeProposer

ROOT = Path(__file__).resolve().parents[2]

TWO_KERNELS = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def shift_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def run(x):
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
    shift_kernel[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
'''


def _launch(kernel: str) -> dict[str, Any]:
    return {"kernel": kernel, "grid": [4, 1, 1], "options": {"num_warps": 4}, "args": [
        {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [256], "strides": [1], "range": [-1, 1]},
        {"name": "n", "kind": "int", "value": 256},
        {"name": "BLOCK", "kind": "constexpr", "value": 64},
    ]}


class PassingRunner:
    """Every verify job passes on one shape (interpret: nothing timed); records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[VerifyRequest] = []

    def verify(self, backend: str, payload: VerifyRequest, **_: Any) -> dict[str, Any]:
        self.sent.append(payload)
        checks = [{"seed": 0, "passed": True, "max_abs": 0.0, "shape": "recorded", "held_out": False}]
        return {"ok": True, "result": {"ok": True, "passed": True, "checks": checks, "timing_meaningful": False}}


class BodyEdits:
    """Two candidates per kernel that change only that kernel's body (replay can verify both)."""

    name = "body-edits"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
        self.asked.append(ctx.kernel)
        old = "* 2.0" if ctx.kernel == "scale_kernel" else "+ 1.0"
        return [
            Candidate(ctx.source.replace(old, f"{old} * {k}.0"), "recipe", "body-edit", ctx.kernel,
                      f"{ctx.kernel} x{k}", "test", (), 1)
            for k in (1, 3)
        ]


@pytest.fixture
def replayed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The file's kernels have launches recorded from this text (the launch store, stood in for)."""
    launches = [_launch("scale_kernel"), _launch("shift_kernel")]
    monkeypatch.setattr(loop, "replay_launches", lambda path, source, kernels: list(launches))
    monkeypatch.setattr(loop, "recorded_for", lambda path, source, kernel=None: list(launches))
    monkeypatch.setattr(loop, "collect", lambda *a, **k: loop.Evidence())  # no compile, no profile
    return launches


def _options(kernel: str | None = None) -> OptimizeOptions:
    return OptimizeOptions(backend="interpret", budget=Budget(candidates=10, rounds=1), profile=False,
                           gate=GateConfig(backend="interpret", compile_check=False), kernel=kernel)


def test_a_candidates_replay_plan_is_computed_once(replayed, monkeypatch: pytest.MonkeyPatch):
    # launch_overrides is where replay works out what a candidate changed at its launch sites (the costly part
    # of a plan: two parses and a walk of both texts); count how often it is asked about each candidate.
    asked: list[str] = []
    real = replay_overrides.launch_overrides

    def counting(before: str, after: str) -> Any:
        asked.append(after)
        return real(before, after)

    monkeypatch.setattr(replay_overrides, "launch_overrides", counting)
    runner, proposer = PassingRunner(), BodyEdits()
    result = optimize_source(TWO_KERNELS, "two.py", runner, _options(), [proposer])
    assert result.error is None, result.error
    verified = [s.candidate.source for s in result.offered]
    assert len(verified) == 4 and not result.rejected  # every candidate was verified by replay
    assert [r.harness.source for r in runner.sent] == verified
    assert all(r.harness.mode == "replay" and len(r.launches) == 2 for r in runner.sent)
    assert {src: asked.count(src) for src in verified} == {src: 1 for src in verified}


def test_a_refused_candidate_is_planned_once_and_declined(replayed, monkeypatch: pytest.MonkeyPatch):
    asked: list[str] = []
    real = replay_overrides.launch_overrides
    monkeypatch.setattr(replay_overrides, "launch_overrides", lambda b, a: asked.append(a) or real(b, a))

    class WrapperEdit:
        name = "wrapper-edit"

        def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
            text = ctx.source.replace("def run(x):\n", "def run(x):\n    x = x * 1\n")
            return [Candidate(text, "recipe", "wrapper", ctx.kernel, "wrapper", "test", (), 1)]

    runner = PassingRunner()
    result = optimize_source(TWO_KERNELS, "two.py", runner, _options("scale_kernel"), [WrapperEdit()])
    assert runner.sent == [] and not result.offered
    assert [d.proposer for d in result.declined] == ["wrapper"]
    assert "cannot verify a change outside the kernels' bodies" in result.declined[0].reason
    assert len(asked) == 1


@pytest.mark.parametrize("kernel, expected", [
    ("shift_kernel", ["shift_kernel"]),
    ("scale_kernel", ["scale_kernel"]),
    (None, ["scale_kernel", "shift_kernel"]),
])
def test_the_kernel_argument_restricts_the_candidates_to_that_kernel(replayed, kernel, expected):
    runner, proposer = PassingRunner(), BodyEdits()
    result = optimize_source(TWO_KERNELS, "two.py", runner, _options(kernel), [proposer])
    assert proposer.asked == expected
    assert sorted({s.candidate.kernel for s in result.offered}) == expected


def test_an_unknown_kernel_is_an_error(replayed):
    result = optimize_source(TWO_KERNELS, "two.py", PassingRunner(), _options("nope_kernel"), [BodyEdits()])
    assert result.error is not None and "'nope_kernel'" in result.error


def test_one_function_builds_the_proposers():
    runner = PassingRunner()
    found = build_proposers(runner, "sm_90", "cuda", workers=3)
    assert [type(p) for p in found] == [RecipeProposer, ConfigSearch]
    assert found[1].runner is runner and found[1].workers == 3 and found[1].target == "sm_90"
    llm = BodyEdits()
    assert build_proposers(runner, "sm_90", "cuda", config_search=False, llm=llm)[1:] == [llm]
    assert build_proposers(runner, "sm_90", "cuda")[0] is not found[0]  # fresh per run: they keep what they declined


def test_no_other_module_assembles_proposers():
    # The editor, `tritonlens optimize` and `tritonlens bench` call build_proposers; none makes its own list.
    builder = ROOT / "server" / "engine" / "optimize" / "proposer_set.py"
    makers = []
    for path in (ROOT / "server").rglob("*.py"):
        if path == builder:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("RecipeProposer", "ConfigSearch"):
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert makers == []
    users = {p.relative_to(ROOT).as_posix() for p in (ROOT / "server").rglob("*.py")
             if "build_proposers(" in p.read_text(encoding="utf-8") and p != builder}
    assert {"server/features/optimize.py", "server/commands/optimize.py", "server/commands/bench.py"} <= users
