"""Live compiles under the upstream Triton environment (marker cuda_env; skipped when it is missing):
the production compile worker's output goes straight into the analysis, and the committed fixtures are
checked against a fresh compile."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cuda_cases import FIXTURES, ROOT, load_case

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.ascend_runner.protocol import CompileRequest

pytestmark = pytest.mark.cuda_env


@pytest.fixture(scope="module")
def cuda_python() -> str:
    try:
        return find_environment("cuda").python
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def runner(cuda_python: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    r = LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("cache")), "workers": 1, "timeout_s": 180})
    yield r
    r.close()


def _line(source: str, needle: str) -> int:
    return next(i for i, t in enumerate(source.splitlines(), 1) if needle in t)


def _compile_and_analyze(
    runner: LocalRunner,
    corpus: str,
    kernel: str,
    signature: dict,
    constants: dict,
    divisibility: list[str],
    options: dict,
):  # noqa: ANN202
    source = (ROOT / "tests" / "corpus" / corpus).read_text()
    path = f"/home/someone/edits/{corpus}"  # unsaved-buffer path: locations must come from the request
    req = CompileRequest(
        source=source,
        path=path,
        kernel=kernel,
        signature=signature,
        constants=constants,
        divisibility=divisibility,
        target="sm_90",
        options=options,
    )
    result = runner.compile(req)
    assert result.ok, result.errors
    report = analyze(result.stages, result.metadata, result.resources, result.target, source, kernel, path)
    return source, report


SOFTMAX_SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_row": "i32", "n_cols": "i32"}


def test_softmax_naive_through_the_compile_worker(runner: LocalRunner) -> None:
    source, report = _compile_and_analyze(
        runner,
        "softmax.py",
        "softmax_naive",
        SOFTMAX_SIG,
        {"BLOCK": 1024},
        ["x_ptr", "out_ptr"],
        {"num_warps": 4},
    )
    got = {(f.code, f.span.line) for f in report.findings}
    first = _line(source, "row_max = tl.max(tl.load(")
    second = _line(source, "x = tl.load(x_ptr + cols + row * stride_row")
    store = _line(source, "tl.math.div_rn(num, den)")
    assert {("TL302", first), ("TL314", second), ("TL313", store), ("TL302", store)} <= got
    assert report.summary["main_load_bits"] == 32 and report.summary["registers"] > 0
    assert set(report.line_maps) >= {"ttir", "ttgir", "ptx", "sass"}


def test_softmax_good_through_the_compile_worker_is_clean(runner: LocalRunner) -> None:
    _, report = _compile_and_analyze(
        runner,
        "softmax.py",
        "softmax_good",
        SOFTMAX_SIG,
        {"BLOCK": 1024},
        list(SOFTMAX_SIG),
        {"num_warps": 4},
    )
    assert report.findings == [] and report.summary["main_load_bits"] == 128


def test_matmul_without_stages_through_the_compile_worker(runner: LocalRunner) -> None:
    sig = {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "stride_am": "i32",
        "stride_bk": "i32",
        "stride_cm": "i32",
    }
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    source, report = _compile_and_analyze(
        runner, "matmul.py", "matmul_kernel", sig, consts, list(sig), {"num_warps": 8, "num_stages": 1}
    )
    loop = _line(source, "for _k in range(0, K, BLOCK_K):")
    assert [(f.code, f.span.line) for f in report.findings] == [("TL307", loop)]
    assert report.summary["dot_lowering"] == "wgmma"


@pytest.mark.parametrize("case", ["add_n_unaligned", "softmax_good"])
def test_committed_fixtures_match_a_fresh_compile(cuda_python: str, tmp_path: Path, case: str) -> None:
    subprocess.run(
        [cuda_python, str(FIXTURES / "generate.py"), "--out", str(tmp_path), case],
        check=True,
        capture_output=True,
        timeout=300,
    )
    committed = load_case(case)
    for stage in ("ttgir", "ptx"):
        fresh = (tmp_path / case / stage).read_text()
        # Only where the checkout (and its .envs) lives may differ: folders in quoted paths, and PTX's DWARF
        # sections, which spell the compile folder out byte by byte.
        assert _portable(fresh) == _portable(committed.stages[stage]), f"{case}/{stage} is stale"


def _portable(text: str) -> str:
    text = text.split(".section\t.debug", 1)[0].split(".section .debug", 1)[0]
    return re.sub(r'"[^"\n]*/', '"', text)
