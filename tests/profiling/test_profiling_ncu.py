"""The Nsight Compute source-view parser, on CSV captured on the lent H200 (benchmarks/gpu/results/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.analysis.profile.ncu import NcuParseError, _number, parse_source_csv

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "results"
TRANSPOSE_CSV = RESULTS / "run1" / "ncu_transpose_source.csv"


@pytest.fixture(scope="module")
def view():
    return parse_source_csv(TRANSPOSE_CSV.read_text())


def test_lines_of_the_naive_transpose(view):
    assert view.functions == ["transpose_naive_kernel"]
    by_line = {ln.line: ln for ln in view.lines}
    assert sorted(by_line) == [25, 27, 28, 29, 30, 31]
    assert by_line[31].source.startswith("tl.store(out_ptr + cols * n + row")
    assert all(ln.file.endswith("benchmarks/gpu/kb_copy.py") for ln in view.lines)


def test_uncoalesced_store_counters(view):
    by_line = {ln.line: ln for ln in view.lines}
    load, store = by_line[30], by_line[31]
    # the load walks a row: exactly the ideal sector count; the store walks a column: 8x the ideal
    assert load.l2_sectors == load.l2_sectors_ideal == 8388608 and load.l2_sectors_excessive == 0
    assert (store.l2_sectors, store.l2_sectors_ideal, store.l2_sectors_excessive) == (
        67108864,
        8388608,
        58720256,
    )
    assert store.excessive_fraction == pytest.approx(0.875)
    assert "Store" in store.access and "Global" in store.access


def test_stall_samples_and_sass_rows(view):
    by_line = {ln.line: ln for ln in view.lines}
    store = by_line[31]
    assert store.stall_samples == 140364
    assert view.total_stall_samples() == sum(ln.stall_samples for ln in view.lines)
    assert max(store.stalls, key=store.stalls.get) == "mio"
    assert "long_sb" in store.stalls and all(v > 0 for v in store.stalls.values())
    assert store.sass and any("ST" in s or "STG" in s for s in store.sass)
    # every SASS row (empty line number, an address) is attached to some source line
    sass_rows = [r for r in TRANSPOSE_CSV.read_text().splitlines() if r.startswith('"","","0x')]
    assert sum(len(ln.sass) for ln in view.lines) == len(sass_rows) > 100


def test_for_file_matches_by_suffix(view):
    assert len(view.for_file("benchmarks/gpu/kb_copy.py")) == 6
    assert view.for_file("other.py") == []


def test_numbers():
    assert _number("1,234") == 1234
    assert _number("-") == 0
    assert _number("Global(8),Shared(4)") == 12
    assert _number("0.5") == 0


def test_not_a_source_page():
    with pytest.raises(NcuParseError, match="Line No"):
        parse_source_csv('"ID","Kernel Name"\n"0","add_kernel"\n')
    assert parse_source_csv('"Line No","Source","Address","Source"\n').lines == []


def test_for_file_matches_a_profile_taken_under_another_folder(view):
    # A remote runner (or the device machine) profiled the same file under a different checkout path.
    lines = view.for_file("/home/someone/elsewhere/benchmarks/gpu/kb_copy.py")
    assert lines and {ln.file for ln in lines} == {view.lines[0].file}
    assert not view.for_file("/home/someone/unrelated.py")
    assert all(not ln.file.endswith("standard.py") for ln in view.for_file("kb_copy.py"))
