"""The hivm-stage parsers and findings on real bishengir-compile output (tests/fixtures/ascend/hivm, made by
generate_hivm.py from ascendnpu-ir 1.2.0 under triton-ascend 3.2.0's ttadapter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonlens.analysis.compiler.ascend.hivm import retry_settings
from tritonlens.analysis.compiler.ascend.ub_feasibility import ub_feasibility
from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.ir import hivm as H
from tritonlens.analysis.compiler.ir.mlir_loc import UserFiles

ROOT = Path(__file__).resolve().parents[2]
HIVM = ROOT / "tests" / "fixtures" / "ascend" / "hivm"


def case(stem: str) -> dict:
    meta = json.loads((HIVM / f"{stem}.json").read_text())
    meta["stages"] = {
        p.name[len(stem) + 1 :]: p.read_text() for p in HIVM.glob(f"{stem}.*") if p.suffix != ".json"
    }
    meta["source"] = (ROOT / meta["request"]["path"]).read_text()
    return meta


def user(c: dict) -> UserFiles:
    return UserFiles([c["request"]["path"]])


def report(c: dict):
    r = c["request"]
    return analyze(c["stages"], c["metadata"], {}, r["target"], c["source"], r["kernel"], r["path"])


def test_log_reports_overflow_numbers_and_retries() -> None:
    log = H.parse_log(case("ub_overflow-ascend910b3")["stages"]["hivm.log"])
    assert log.overflow is not None
    assert (log.overflow.required_bits, log.overflow.available_bits) == (4194304, 1572864)
    assert log.overflow.line == 9  # the compiler locates it at the kernel's def
    assert retry_settings(log.retries) == "enable-code-motion=false, then enable-auto-multi-buffer=false"
    assert log.hivmc_missing  # it probes for hivmc first


def test_a5_binary_reports_the_950_ub() -> None:
    log = H.parse_log(case("ub_overflow-ascend950")["stages"]["hivm.log"])
    assert log.overflow is not None and log.overflow.available_bits == 2031616  # 248 KB
    assert H.ub_capacity_bits(case("fits-ascend950")["stages"]["hivm"]) == 2031616
    assert H.ub_capacity_bits(case("fits-ascend910b3")["stages"]["hivm"]) == 1572864


def test_plan_memory_offsets_show_multibuffering() -> None:
    c = case("persistent_add-ascend910b3")
    (plan,) = H.ub_plans(c["stages"]["hivm.plan-memory"], user(c))
    assert not plan.failed
    lines = {b.line for b in plan.buffers}
    assert {12, 13} <= lines
    assert all(b.copies == 2 and b.bytes == 8192 for b in plan.buffers)  # 2048xf32, double-buffered
    assert plan.used_bytes == max(o + 8192 for b in plan.buffers for o in b.offsets)
    marks = H.multibuffer_marks(c["stages"]["hivm.multibuffer"], user(c))
    assert {(f, line) for _, f, line, _ in marks} >= {(2, 12), (2, 13)}


def test_failed_plan_lists_the_buffers_on_their_lines() -> None:
    c = case("ub_overflow-ascend910b3")
    plans = H.ub_plans(c["stages"]["hivm.plan-memory"], user(c))
    failed = [p for p in plans if p.failed]
    assert failed and {b.line for b in failed[0].buffers} == {12, 13, 14}
    assert all(b.type == "65536xf32" for b in failed[0].buffers)


def test_scalar_sites_and_core_split() -> None:
    c = case("scalar_index-ascend910b3")
    sites = H.scalar_sites(c["stages"]["hivm.scalar"], user(c))
    assert ("memref.load", 13) in {(s.op, s.line) for s in sites}
    cores = H.core_types(case("matmul-ascend910b3")["stages"]["hivm"])
    assert cores["module"] == "MIX"
    assert sorted(v for k, v in cores.items() if k != "module") == ["AIC", "AIV"]


def test_overflow_finding_cites_the_compiler_on_the_largest_buffer_line() -> None:
    rep = report(case("ub_overflow-ascend910b3"))
    (f,) = [f for f in rep.findings if f.code == "TL403"]
    assert f.span.line == 14 and f.severity.name == "ERROR"
    assert "requires 4194304 bits" in f.message and "1572864 bits" in f.message
    assert f.data["source"] == "bishengir" and f.data["buffer_lines"] == [12, 13, 14]
    assert rep.summary["ub_overflow"] and rep.summary["device_binary"] is False


def test_a_kernel_that_fits_gets_planmemory_numbers_not_an_estimate() -> None:
    rep = report(case("fits-ascend910b3"))
    assert not [f for f in rep.findings if f.code == "TL403"]
    assert rep.summary["ub_source"] == "bishengir PlanMemory"
    assert 0 < rep.summary["ub_used_bits"] <= rep.summary["ub_capacity_bits"] == 1572864
    assert "hivm" in rep.line_maps and rep.line_maps["hivm"]
    assert any("no device binary" in n for n in rep.notes)


def test_gather_confirms_the_ttadapter_scalar_loop() -> None:
    rep = report(case("gather-ascend910b3"))
    (f,) = [f for f in rep.findings if f.code == "TL401"]
    assert f.data["confirmed_by"].startswith("bishengir")
    assert any(e.stage == "hivm.scalar" for e in f.evidence)
    assert not [g for g in rep.findings if g.code == "TL408" and g.span.line == f.span.line]


def test_one_time_scalar_load_is_not_a_scalar_fallback() -> None:
    # line 13 loads one element once per program (no loop around it in the IR): not a cost of its own
    rep = report(case("scalar_index-ascend910b3"))
    assert 13 not in {f.span.line for f in rep.findings if f.code == "TL408"}


def test_scalar_load_inside_a_loop_is_a_scalar_fallback() -> None:
    # the same single-element access, wrapped in a loop of the IR, runs once per iteration
    c = case("scalar_index-ascend910b3")
    lines = c["stages"]["hivm.scalar"].splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if "memref.load" in text)
    loop = "  scf.for %it = %c0 to %c1024 step %c1024 {\n"
    c["stages"]["hivm.scalar"] = "".join([*lines[:at], loop, lines[at], "  } loc(unknown)\n", *lines[at + 1 :]])
    hits = [f for f in report(c).findings if f.code == "TL408" and f.span.line == 13]
    assert hits and hits[0].data["in_loop"] is True


@pytest.mark.parametrize(
    ("stem", "feasible", "available"),
    [
        ("ub_overflow-ascend910b3", False, 1572864),
        ("ub_overflow-ascend950", False, 2031616),
        ("fits-ascend910b3", True, 1572864),
        ("fits-ascend950", True, 2031616),
    ],
)
def test_ub_feasibility_is_the_compilers_verdict(stem: str, feasible: bool, available: int) -> None:
    v = ub_feasibility(case(stem))
    assert v.feasible is feasible and v.source == "bishengir"
    assert v.available_bits == available
    assert v.used_bits is not None and (v.used_bits > available) is (not feasible)


def test_ub_feasibility_without_the_hivm_stage_is_undecided() -> None:
    v = ub_feasibility({"stages": {"ttadapter": "module {}"}, "metadata": {}})
    assert v.feasible is None and v.source == "undecided"


def test_int64_tile_ops_are_confirmed_as_scalar_loops() -> None:
    c = case("int64-ascend910b3")
    loops = H.ub_scalar_loops(c["stages"]["hivm"], user(c))
    assert {(lp.line, lp.trip_count) for lp in loops} >= {(13, 1024), (14, 1024)}
    assert {"arith.muli", "arith.addi"} <= {o for lp in loops for o in lp.ops}
    rep = report(c)
    tl402 = {f.span.line: f for f in rep.findings if f.code == "TL402"}
    assert {13, 14} <= set(tl402)
    assert all(
        f.data["confirmed_by"] == "bishengir" and "Confirmed by bishengir" in f.message
        for f in tl402.values()
    )
    assert not [f for f in rep.findings if f.code == "TL408"]  # folded into the TL402 they confirm


def test_int32_compare_kept_as_a_vector_op_is_dropped() -> None:
    # bishengir's final HIVM module keeps a vector op on the compare's line: the compiler refutes TL402
    rep = report(case("gather-ascend910b3"))
    assert not [f for f in rep.findings if f.code == "TL402"]


def test_code_lens_shows_the_compilers_ub_numbers() -> None:
    from tritonlens.server.features.compile import ub_lens_part

    assert (
        ub_lens_part(report(case("ub_overflow-ascend910b3")).summary)
        == "UB overflow 512 of 192 KB (bishengir)"
    )
    fits = ub_lens_part(report(case("fits-ascend910b3")).summary)
    assert fits is not None and fits.startswith("UB ") and fits.endswith("of 192 KB (bishengir PlanMemory)")
    assert ub_lens_part({"ub_bytes_estimate": 1000}) is None  # estimates are not shown as the compiler's


def test_static_range_loses_multibuffering_as_bishengir_decided() -> None:
    rep = report(case("static_range-ascend910b3"))
    (f,) = [f for f in rep.findings if f.code == "TL406"]
    assert f.data["confirmed_by"] == "bishengir" and f.data["multibuffered"] == []
    assert rep.summary["multibuffered"] == []  # the persistent loop's loads are marked (test above): these not


def test_row_loop_scalars_are_not_scalar_syncs_nor_scalar_loops() -> None:
    # issue 24: a row-persistent loop's per-row statistic is a scalar by design (TL409), and the loop statement's
    # own scalar bookkeeping is not a tile op lowered element by element (TL408)
    c = case("row_stats-ascend910b3")
    assert [lp for lp in H.ub_scalar_loops(c["stages"]["hivm"], user(c)) if lp.line == 10]  # the IR has it
    assert not [f for f in report(c).findings if f.code in ("TL408", "TL409")]


def test_a_scalar_sync_outside_a_row_loop_is_still_reported() -> None:
    # the same waits, with the row loop's load no longer addressed by the loop variable
    c = case("row_stats-ascend910b3")
    c["source"] = c["source"].replace("x = tl.load(x_ptr + row * D + cols)", "x = tl.load(x_ptr + cols)")
    assert {f.span.line for f in report(c).findings if f.code == "TL409"} >= {12}
