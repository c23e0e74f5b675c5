"""Live compiles through ascend_runner/worker/compile_ascend.py under .envs/ascend (skipped without it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ascend_cases import FIXTURES, KERNELS, ROOT, run_worker

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.ascend_runner.protocol import compile_result_from

pytestmark = pytest.mark.ascend_env

sys.path.insert(0, str(FIXTURES))
import generate  # noqa: E402  (the fixture generator: one table of cases for fixtures and live tests)


def compile_case(python: Path, name: str, **changes: object) -> tuple[dict, dict]:
    req = generate.request_for(generate.CASES[name])
    req.update(changes)
    return run_worker(python, req), req


def analyzed(result: dict, req: dict, metadata: dict | None = None):
    return analyze(
        result["stages"],
        {**result["metadata"], **(metadata or {})},
        result["resources"],
        req["target"],
        req["source"],
        req["kernel"],
        req["path"],
    )


def line_of(req: dict, needle: str) -> int:
    return next(i for i, t in enumerate(req["source"].splitlines(), 1) if needle in t)


def test_elementwise_compiles_to_ttir_and_ttadapter_without_cann(ascend_python: Path) -> None:
    result, req = compile_case(ascend_python, "add")
    assert result["ok"], result["errors"]
    assert set(result["stages"]) >= {"ttir", "ttadapter"}
    assert f'loc("{req["path"]}":' in result["stages"]["ttadapter"]  # locations name the request's path
    meta = result["metadata"]
    assert meta["mix_mode"] == "aiv" and meta["kernel_name"] == "add_kernel" and meta["soc"] == "Ascend910B3"
    if shutil.which("bishengir-compile") is None:
        assert "npubin" not in result["stages"]
        assert meta["npubin"].startswith("not built") and "bishengir-compile" in meta["npubin"]
    report = analyzed(result, req)
    assert {f.code for f in report.findings} == {"TL407"}
    assert compile_result_from(result).stages.keys() == result["stages"].keys()  # the protocol's shape


def test_padding_fix_compiles_and_removes_the_fill(ascend_python: Path) -> None:
    """Level 5 in miniature: apply TL407's edit, recompile, and the vector fill is gone from the IR."""
    result, req = compile_case(ascend_python, "add")
    before = analyzed(result, req)
    source = req["source"].splitlines(keepends=True)
    for f in sorted(before.findings, key=lambda f: f.span.line, reverse=True):
        (edit,) = f.fix.edits
        row = source[edit.span.line - 1]
        source[edit.span.line - 1] = row[: edit.span.col] + edit.new_text + row[edit.span.end_col :]
    fixed, req2 = compile_case(ascend_python, "add", source="".join(source))
    assert fixed["ok"], fixed["errors"]
    assert "linalg.fill" in result["stages"]["ttadapter"]
    assert "linalg.fill" not in fixed["stages"]["ttadapter"]
    assert analyzed(fixed, req2).findings == []


def test_clean_matmul_is_mix_mode_and_has_no_findings(ascend_python: Path) -> None:
    result, req = compile_case(ascend_python, "matmul_aligned")
    assert result["ok"], result["errors"]
    assert result["metadata"]["mix_mode"] == "mix"
    assert "linalg.matmul" in result["stages"]["ttadapter"]
    assert analyzed(result, req).findings == []


def test_small_k_matmul_gets_the_cube_alignment_finding(ascend_python: Path) -> None:
    result, req = compile_case(ascend_python, "matmul")
    report = analyzed(result, req, {"grid": [16, 16]})
    codes = {(f.code, f.span.line) for f in report.findings}
    assert ("TL405", line_of(req, "a = tl.load")) in codes
    (grid,) = [f for f in report.findings if f.code == "TL404"]
    assert grid.data["cores"] == 20 and grid.data["blocks"] == 256


def test_gather_is_scalarized_on_the_gather_line(ascend_python: Path) -> None:
    result, req = compile_case(ascend_python, "gather")
    assert result["ok"], result["errors"]
    report = analyzed(result, req)
    (f,) = [x for x in report.findings if x.code == "TL401"]
    assert f.span.line == line_of(req, "tl.load(src_ptr + idx")
    assert "ExtractedLoadOrStore" in f.evidence[0].excerpt


def test_compile_error_points_at_the_line(ascend_python: Path) -> None:
    result, req = compile_case(ascend_python, "broken")
    assert not result["ok"]
    (err,) = result["errors"]
    assert err["stage"] == "frontend" and err["line"] == line_of(req, "tl.arange(0, n)")
    assert compile_result_from(result).errors[0].line == err["line"]
    assert "constexpr" in err["message"]


def test_bad_requests_answer_with_stage_errors(ascend_python: Path) -> None:
    base = generate.request_for(generate.CASES["add"])
    half_typed = {**base, "source": base["source"] + "\n    x = tl.load(\n"}
    result = run_worker(ascend_python, half_typed)
    assert not result["ok"] and result["errors"][0]["stage"] == "frontend" and result["errors"][0]["line"]
    plain = {**base, "source": "def add_kernel(x):\n    return x + 1\n"}
    result = run_worker(ascend_python, plain)
    assert result["errors"][0]["stage"] == "frontend" and "@triton.jit" in result["errors"][0]["message"]
    missing = {**base, "signature": {"x_ptr": "*fp32"}}
    result = run_worker(ascend_python, missing)
    assert "no type or constexpr value" in result["errors"][0]["message"]
    wrong_target = {**base, "target": "sm_90"}
    assert run_worker(ascend_python, wrong_target)["errors"][0]["stage"] == "worker"
    proc = subprocess.run(
        [str(ascend_python), str(ROOT / "ascend_runner/worker/compile_ascend.py")],
        input="{not json",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(proc.stdout)["errors"][0]["stage"] == "worker"


def test_autotuned_kernel_compiles_without_a_device(ascend_python: Path) -> None:
    source = (
        (KERNELS / "add_kernel.py")
        .read_text()
        .replace(
            "@triton.jit",
            '@triton.autotune(configs=[triton.Config({"BLOCK": 1024})], key=["n"])\n@triton.jit',
        )
    )
    result, _ = compile_case(ascend_python, "add", source=source)
    assert result["ok"], result["errors"]


def test_committed_fixtures_are_what_the_compiler_produces(ascend_python: Path, tmp_path: Path) -> None:
    """The parser tests run on fixtures; they must still be real output of this triton-ascend."""
    for name in ("gather", "static_range", "matmul"):
        result, _ = compile_case(ascend_python, name)
        for stage in ("ttir", "ttadapter"):
            assert result["stages"][stage] == (FIXTURES / f"{name}.{stage}").read_text(), (name, stage)


def test_runner_protocol_through_worker_main(ascend_python: Path) -> None:
    req = generate.request_for(generate.CASES["static_range"])
    job = {"schema": 1, "id": "t1", "kind": "compile", "backend": "ascend", "payload": req}
    proc = subprocess.run(
        [str(ascend_python), str(ROOT / "ascend_runner/worker/main.py")],
        input=json.dumps(job) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    reply = json.loads(proc.stdout.splitlines()[0])
    assert reply["ok"] and reply["result"]["ok"]
    report = analyzed(reply["result"], req)
    assert [f.code for f in report.findings] == ["TL406"]


@pytest.mark.parametrize(
    ("example", "kernel", "code", "needle"),
    [
        ("gather.py", "gather_kernel", "TL401", "tl.load(table_ptr + idx"),
        ("vector_add.py", "add_kernel", "TL407", "x = tl.load"),
    ],
)
def test_examples_through_the_pipeline(
    ascend_python: Path, tmp_path: Path, example: str, kernel: str, code: str, needle: str
) -> None:
    path = ROOT / "examples" / example
    if not path.exists():
        pytest.skip(f"examples/{example} not present")
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.server.engine.diagnose import analyze_kernel

    source = path.read_text()
    runner = LocalRunner({"workers": 1, "timeout_s": 300, "cache_dir": str(tmp_path)})
    try:
        result = analyze_kernel(source, f"examples/{example}", kernel, "ascend910b3", runner)
    finally:
        runner.close()
    assert result.error is None, result.error
    want = next(i for i, t in enumerate(source.splitlines(), 1) if needle in t)
    assert any(f.code == code and f.span.line == want for f in result.findings), [
        (f.code, f.span.line) for f in result.findings
    ]
