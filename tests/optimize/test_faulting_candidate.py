"""A candidate that faults on the device ends only its own verify job: it is rejected at stage `fault` with the
fault named, and the candidates after it are still verified (issue 24: block moves of a matmul crashed with an
illegal memory access inside the timing process). No GPU here: under the CPU interpreter a load from a wild
address kills the process with SIGSEGV, the way an illegal address poisons a CUDA context."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.analysis.rewrite.model import Candidate, Verdict
from tritonlens.server.engine.optimize.faults import device_fault
from tritonlens.server.engine.optimize.gate import Gate, GateConfig
from tritonlens.server.engine.optimize.shapes import Shape, ShapePlan

TRITONLENS = Path(sys.executable).parent / "tritonlens"

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask)


def shift(x, y):
    n = x.numel()
    shift_kernel[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
'''

DRIVER = """
import torch
import shifty

shifty.shift(torch.randn(100), torch.empty(100))
shifty.shift(torch.randn(37), torch.empty(37))
"""

WILD = "x = tl.load(x_ptr + offs + (1 << 44), mask=mask)"  # 16 TiB past the tensor: unmapped memory


class _Fixed:
    name = "fixed"

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates, self.declined = candidates, []

    def propose(self, ctx, feedback):
        out, self.candidates = self.candidates, []
        return out


def _candidate(source: str, old: str, new: str, title: str) -> Candidate:
    assert old in source
    return Candidate(source=source.replace(old, new), origin="recipe", producer="test", kernel="shift_kernel",
                     title=title, rationale="")


@pytest.mark.cuda_env
def test_a_faulting_candidate_is_rejected_with_the_fault_and_the_search_goes_on(runner, tmp_path):
    from tritonlens.server.engine.optimize.loop import Budget, OptimizeOptions, optimize_source

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    path = tmp_path / "shifty.py"
    path.write_text(KERNEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    proc = subprocess.run([str(TRITONLENS), "record", "--backend", "interpret", "--", "python", "driver.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source = path.read_text()
    crash = _candidate(source, "x = tl.load(x_ptr + offs, mask=mask)", WILD, "reads a wild address")
    good = _candidate(source, "x * 2.0 + 1.0", "x + x + 1.0", "adds instead of multiplying")
    options = OptimizeOptions(backend="interpret", target="sm_90", budget=Budget(candidates=3, rounds=1),
                              profile=False)
    result = optimize_source(source, str(path), runner, options, proposers=[_Fixed([crash, good])])
    assert result.error is None, result.error
    [faulted] = result.rejected
    assert faulted.candidate.title == crash.title
    assert faulted.verdict.stage == "fault", faulted.verdict
    assert "SIGSEGV" in faulted.verdict.reason and faulted.verdict.details["fault"] == "SIGSEGV"
    # the candidate after it was verified normally, on a worker the fault never touched
    assert [s.candidate.title for s in result.offered] == [good.title]
    assert result.offered[0].verdict.accepted


def _judge(reply: dict) -> Verdict:
    plan = ShapePlan((Shape("s", {}, False),), (), Shape("s", {}, False), "")
    gate = Gate(None, GateConfig(backend="cuda"), plan, "f.py")  # type: ignore[arg-type]
    cand = Candidate(source="", origin="config", producer="p", kernel="k", title="t", rationale="")
    return gate.judge_reply(cand, reply, {})


def test_device_faults_are_told_from_other_failures():
    illegal = "RuntimeError: CUDA error: an illegal memory access was encountered"
    verdict = _judge({"ok": True, "result": {"ok": True, "passed": False, "checks": [
        {"seed": 0, "shape": "launch 1", "passed": False, "reason": f"replaying the launch failed: {illegal}"}]}})
    assert verdict.stage == "fault" and "illegal memory access" in verdict.reason
    died = _judge({"ok": False, "error": {"stage": "worker", "reason": "crash",
                                          "message": "the runner worker crashed (SIGABRT) during the job"}})
    assert died.stage == "fault" and died.details["fault"] == "SIGABRT"
    # a wrong result, an out-of-memory kill and a timeout are not device faults
    wrong = _judge({"ok": True, "result": {"ok": True, "passed": False, "checks": [
        {"seed": 0, "shape": "s", "passed": False, "reason": "max error 1e-01 outside atol 1e-4"}]}})
    assert wrong.stage == "correctness"
    assert device_fault("the runner worker was killed (SIGKILL; often the kernel's out-of-memory killer)") is None
    assert device_fault("the job ran past its 600 s timeout; its worker was stopped") is None
    assert device_fault("the candidate's process failed: exit status -11: ") == "SIGSEGV"
