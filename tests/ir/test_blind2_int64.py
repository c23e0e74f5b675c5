"""TL312 (issue 24): 64-bit offsets built from int64 metadata read from memory, or documented as needed, are not
findings; a kernel that widens its own program id still gets one."""

from __future__ import annotations

from cuda_cases import load_case, report_for

from tritonlens.analysis.compiler.dispatch import analyze


def _tl312(report) -> list:
    return [f for f in report.findings if f.code == "TL312"]


def test_offsets_from_loaded_int64_metadata_are_not_tl312() -> None:
    assert not _tl312(report_for("rows_from_offsets"))


def test_widened_program_id_is_still_tl312() -> None:
    assert _tl312(report_for("add_int64"))


def test_a_documented_need_for_64_bit_offsets_silences_tl312() -> None:
    case = load_case("add_int64")
    source = case.source + "\n# the caches exceed 2**31 elements, so offsets must be 64-bit\n"
    report = analyze(
        case.stages, case.meta["metadata"], case.resources, "sm_90", source, case.kernel, case.path
    )
    assert not _tl312(report)
