"""Escalation merging on live compiles (`check --level ir`): pairs the committed fixtures do not cover.

NVIDIA (cuda_env): a strided innermost index (TL109) confirmed by TL301, an int64 cast inside the address
(TL113) confirmed by TL312, and a measured uncoalesced store (TL207) explained by TL301. Ascend (ascend_env):
TL117/TL118 confirmed by TL402, TL119 by TL406, TL115 and TL114 by TL404.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonlens.analysis.core.escalation import merge
from tritonlens.analysis.triage import triage

CUDA_KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def strided_copy(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def wide_index(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs.to(tl.int64), mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


def launch(x, out, n):
    strided_copy[(64,)](x, out, n, stride=3, BLOCK=1024)
    wide_index[(64,)](x, out, n, BLOCK=1024)
"""

ASCEND_KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def wide_compare(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    x = tl.load(x_ptr + offs)
    keep = offs < n
    tl.store(out_ptr + offs, tl.where(keep, x, 0.0))


@triton.jit
def row_tail(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + cols)
    y = tl.where(cols < N, x, 0.0)
    tl.store(out_ptr + tl.program_id(0) * BLOCK + cols, y)


@triton.jit
def unrolled_sum(x_ptr, out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(STEPS):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    tl.store(out_ptr + offs, acc)


@triton.jit
def many_programs(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@triton.jit
def too_many_programs(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def launch(x, out, n):
    wide_compare[(40,)](x, out, n, BLOCK=1024)
    row_tail[(40,)](x, out, n, BLOCK=1024)
    unrolled_sum[(40,)](x, out, BLOCK=256, STEPS=32)
    many_programs[(4096,)](x, out, BLOCK=256)
    too_many_programs[(70000,)](x, out, BLOCK=256)
"""


def line_of(text: str, needle: str) -> int:
    return next(i for i, t in enumerate(text.splitlines(), start=1) if needle in t)


def on_line(findings: list[dict], line: int) -> list[dict]:
    return [f for f in findings if f["span"]["line"] <= line <= f["span"]["end_line"]]


def check_ir(cli, path: Path, target: str) -> list[dict]:
    result = cli("check", "--level", "ir", "--target", target, "--format", "json", str(path))
    assert result.rc == 1, result.err
    return result.json()


@pytest.mark.cuda_env
@pytest.mark.usefixtures("cuda_env", "compile_cache")
def test_cuda_pairs_are_one_finding_each(cli, tmp_path: Path) -> None:
    path = tmp_path / "cuda_pairs.py"
    path.write_text(CUDA_KERNELS)
    found = check_ir(cli, path, "sm_90")
    strided = on_line(found, line_of(CUDA_KERNELS, "x_ptr + offs * stride"))
    assert [f["code"] for f in strided] == ["TL301"]
    assert strided[0]["data"]["confirms"] == ["TL109"] and strided[0]["data"]["cause"] == "stride"
    assert strided[0]["evidence"][0]["summary"].startswith("TL109 (level 1)")
    assert strided[0]["platforms"] == ["cuda"]  # NVIDIA vectorization says nothing about Ascend's DMA
    wide = on_line(found, line_of(CUDA_KERNELS, "x_ptr + offs.to(tl.int64)"))
    assert [f["code"] for f in wide] == ["TL312"]
    # TL113 is Ascend-only (docs/precision.md): on sm_90 the compiler's TL312 stands on its own
    assert "confirms" not in wide[0]["data"] and wide[0]["platforms"] == ["cuda"]
    # the text output shows the same merged result, the info finding marked as such
    text = cli("check", "--level", "ir", "--target", "sm_90", str(path))
    lines = [ln for ln in text.out.splitlines() if ln]
    assert len(lines) == len(found) and not [ln for ln in lines if " TL109 " in ln or " TL113 " in ln]
    assert [ln for ln in lines if " TL312 " in ln and ln.endswith(" [info]")]


@pytest.mark.cuda_env
@pytest.mark.usefixtures("cuda_env", "compile_cache")
def test_platform_specific_confirmation_leaves_the_other_platform_symptom(tmp_path: Path) -> None:
    from tritonlens.ascend_runner.factory import get_runner
    from tritonlens.server.engine.diagnose import analyze_document

    path = tmp_path / "cuda_pairs.py"
    path.write_text(CUDA_KERNELS)
    runner = get_runner(None)
    try:
        compiled = [f for a in analyze_document(CUDA_KERNELS, str(path), "sm_90", runner) for f in a.findings]
    finally:
        runner.close()
    found = list(triage(CUDA_KERNELS, str(path)).findings) + compiled
    line = line_of(CUDA_KERNELS, "x_ptr + offs * stride")
    both = [f for f in merge(found, ("cuda", "ascend")) if f.span.line == line]
    # TL301 holds TL109's symptom for NVIDIA; for Ascend, TL109 is still triage's unconfirmed suspicion
    assert sorted((f.code, f.platforms) for f in both) == [("TL109", ("ascend",)), ("TL301", ("cuda",))]
    assert [f.code for f in merge(found, ("cuda",)) if f.span.line == line] == ["TL301"]


@pytest.mark.ascend_env
@pytest.mark.usefixtures("ascend_env", "compile_cache")
def test_ascend_pairs_are_one_finding_each(cli, tmp_path: Path) -> None:
    path = tmp_path / "ascend_pairs.py"
    path.write_text(ASCEND_KERNELS)
    found = check_ir(cli, path, "ascend910b3")
    expected = {
        "keep = offs < n": ("TL402", ["TL117"], "warning"),
        "for i in tl.static_range(STEPS)": ("TL406", ["TL119"], "warning"),  # TL119's warning is kept
        "many_programs[(4096,)]": ("TL404", ["TL115"], "info"),
        # the launch would fail: triage's error stays an error inside the compiler's finding
        "too_many_programs[(70000,)]": ("TL404", ["TL114"], "error"),
    }
    for needle, (code, confirms, severity) in expected.items():
        hits = on_line(found, line_of(ASCEND_KERNELS, needle))
        assert [f["code"] for f in hits] == [code], (needle, hits)
        assert hits[0]["data"]["confirms"] == confirms and hits[0]["severity"] == severity
        assert hits[0]["evidence"][0]["kind"] == "ast"
    # bishengir keeps this int32 compare a vector op: no TL402 (issue 24: dropped where HIVM keeps the vector
    # op), so triage's TL118 stays on its own, unconfirmed
    kept = on_line(found, line_of(ASCEND_KERNELS, "y = tl.where(cols < N"))
    assert [f["code"] for f in kept] == ["TL118"] and not kept[0].get("data", {}).get("confirms")
    # the int64 cast is on its own line, where no int64 tile op was flagged: it stays a triage finding
    cast = on_line(found, line_of(ASCEND_KERNELS, ".to(tl.int64)"))
    assert [f["code"] for f in cast] == ["TL113"]


@pytest.mark.cuda_env
@pytest.mark.usefixtures("cuda_env", "compile_cache")
def test_measured_uncoalesced_store_is_explained_by_the_compiler(cli) -> None:
    """Level 2 on the numbers recorded on the H200 (benchmarks/gpu/results/run1: Nsight Compute's per-line L2
    sectors of the naive transpose) folded into level 4 from compiling the same file for sm_90."""
    from tritonlens.analysis.core import devices
    from tritonlens.analysis.core.findings import Finding, Level, Severity
    from tritonlens.analysis.profile import analyze as profiling
    from tritonlens.analysis.profile.ncu import parse_source_csv

    root = Path(__file__).resolve().parents[2]
    path = root / "benchmarks" / "gpu" / "kb_copy.py"
    run1 = root / "benchmarks" / "gpu" / "results" / "run1"
    source = path.read_text()
    add = json.loads((run1 / "profile_add.json").read_text())
    h200 = devices.from_runner(add["device"], add["ceilings"])
    profile = profiling.analyze_run(
        json.loads((run1 / "profile_transpose.json").read_text()),
        h200,
        source=source,
        path=str(path),
        ncu=parse_source_csv((run1 / "ncu_transpose_source.csv").read_text()),
    )
    store = line_of(source, "tl.store(out_ptr + cols * n + row")
    (measured,) = [f for f in profile.findings if f.code == "TL207"]
    assert measured.span.line == store and measured.level == Level.PROFILE
    compiled = [Finding.from_dict(f) for f in check_ir(cli, path, "sm_90")]
    (tl301,) = [f for f in compiled if f.code == "TL301" and f.span.line == store]
    assert tl301.data["cause"] == "stride" and tl301.kernel == measured.kernel
    # n has no visible value, so the compiler alone would hedge (info); it confirms triage's column-access
    # finding (TL131, a warning from the source alone) and keeps that severity; the measurement settles it
    assert tl301.severity == Severity.WARNING and tl301.data["confirms"] == ["TL131"]
    assert "depends_on_unknown_value" in tl301.data
    on_store = [f for f in merge([*profile.findings, *compiled]) if f.span.line == store]
    # TL304 (layout conversion) and TL208 (stall hotspot) are other causes on that line: they stay
    assert sorted(f.code for f in on_store) == ["TL208", "TL301", "TL304"]
    (merged,) = [f for f in on_store if f.code == "TL301"]
    assert merged.code == "TL301" and merged.data["confirms"] == ["TL207"]
    assert merged.severity == Severity.WARNING
    assert merged.evidence[0].stage == "ncu" and merged.evidence[0].summary.startswith("TL207 (level 2)")
    assert [e.stage for e in merged.evidence[1:]] == [e.stage for e in tl301.evidence]
