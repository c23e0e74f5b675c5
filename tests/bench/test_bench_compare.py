"""benchmarks/gpu/bench_compare.py: the per-task table of a blind figure and a later run of the same set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"))

import bench_compare  # noqa: E402


def _report(folder: Path, tasks: list[dict]) -> str:
    folder.mkdir()
    (folder / "bench-report.json").write_text(json.dumps({"tasks": tasks}))
    return str(folder)


def test_table_shows_before_after_winner_and_the_closest_miss(tmp_path: Path) -> None:
    won = {"task": "bench/x/mm.py", "status": "done", "speedup": 1.0, "optimize": {"rejected": []}}
    missed = {"task": "bench/x/ln.py", "status": "done", "speedup": 1.0, "vs_compile": 0.9, "optimize": {"rejected": [
        {"producer": "a", "stage": "timing", "speedup": 0.8},
        {"producer": "b", "stage": "timing", "speedup": 1.02},
        {"producer": "c", "stage": "compile", "reason": "boom"},
    ]}}
    errored = {"task": "bench/x/conv.py", "status": "error", "miss": "the first draft does not pass verification"}
    before = bench_compare._tasks(_report(tmp_path / "b", [won, missed, errored]))
    after_won = {**won, "speedup": 3.0, "vs_compile": 1.2, "optimize": {"applied": [{"producer": "schedule-dot-tiles"}]}}
    after = bench_compare._tasks(_report(tmp_path / "a", [after_won]))
    rows = {line.split(" | ")[0].strip("| "): line for line in bench_compare.table(before, after, "bench/x/").splitlines()}
    assert rows["mm.py"].startswith("| mm.py | 1.00x | 3.00x | 1.20x |") and "schedule-dot-tiles" in rows["mm.py"]
    assert rows["mm.py"].endswith("|  |")  # a win past 1.5x has no miss reason
    assert "best: b 1.02x (timing); 3 tried" in rows["ln.py"]  # not re-run: the blind record stands
    assert "| - | - |" in rows["conv.py"] and "does not pass verification" in rows["conv.py"]
