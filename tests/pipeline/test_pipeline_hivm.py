"""End to end through BiSheng's pipeline on the CPU (the hivm stage): needs .envs/ascend with ascendnpu-ir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "tests" / "ascend" / "kernels" / "ub_overflow_kernel.py"

pytestmark = [pytest.mark.ascend_env, pytest.mark.usefixtures("ascend_env", "compile_cache", "bishengir")]


@pytest.fixture(scope="module")
def bishengir() -> None:
    site = sorted(
        (ROOT / ".envs" / "ascend").glob("lib/python3*/site-packages/ascendnpuir/bin/bishengir-compile")
    )
    if not site:
        pytest.skip("ascendnpu-ir is not installed in .envs/ascend; run scripts/bootstrap --all")


def line_of(needle: str, after: int = 0) -> int:
    lines = KERNEL.read_text().splitlines()
    return next(i for i, text in enumerate(lines, start=1) if i > after and needle in text)


def test_check_reports_the_compilers_ub_overflow_on_the_line(cli) -> None:
    result = cli("check", "--level", "ir", "--target", "ascend910b3", "--format", "json", str(KERNEL))
    assert result.rc == 1, result.err
    findings = [f for f in json.loads(result.out) if f["code"] == "TL403"]
    (over,) = findings  # only the oversized kernel: the one that fits is placed by PlanMemory
    assert over["kernel"] == "ub_overflow_kernel" and over["severity"] == "error"
    assert over["span"]["line"] == line_of("tl.store(out_ptr + offs, x * y + x")
    assert "requires 4194304 bits" in over["message"] and "1572864 bits" in over["message"]
    assert over["data"]["source"] == "bishengir" and over["data"]["retries"]
    assert any(e["stage"] == "hivm.log" and "ub overflow" in e["summary"] for e in over["evidence"])


def test_ir_prints_attributed_hivm(cli) -> None:
    result = cli("ir", str(KERNEL), "--kernel", "fits_kernel", "--stage", "hivm")
    assert result.rc == 0, result.err
    assert "no device binary" in result.err  # no hivmc without CANN, said where the stage is shown
    load = line_of("x = tl.load(x_ptr + offs", after=line_of("def fits_kernel"))
    assert f"// ---- ub_overflow_kernel.py:{load}  x = tl.load(x_ptr + offs, mask=mask)" in result.out
    assert "#hivm.address_space<ub>" in result.out


def test_ir_prints_a_pass_dump(cli) -> None:
    result = cli("ir", str(KERNEL), "--kernel", "fits_kernel", "--stage", "hivm.plan-memory")
    assert result.rc == 0, result.err
    assert "IR Dump After PlanMemory (hivm-plan-memory)" in result.out
    assert "hivm.hir.pointer_cast" in result.out
