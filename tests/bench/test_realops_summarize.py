"""benchmarks/gpu/realops/summarize.py: verified-faster, geometric mean and fault counting over optimize reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("realops_summarize", ROOT / "benchmarks/gpu/realops/summarize.py")
summarize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summarize)


def _report(path: str, *, speedup=None, applied=(), rejected=(), accepted=False) -> dict:
    return {"files": [{
        "path": path, "timing_meaningful": True, "error": None, "initial_ms": 2.0,
        "final_ms": 2.0 / speedup if speedup else 2.0, "speedup": speedup,
        "overall": {"accepted": accepted} if speedup else None,
        "applied": list(applied), "offered": [], "rejected": list(rejected),
    }]}


def test_table_counts_faster_files_faults_and_missing_reports(tmp_path: Path) -> None:
    (tmp_path / "record.txt").write_text(
        "  lib/a.py: k_a: 3 distinct launch(es)\n  lib/b.py: k_b: 1 distinct launch(es)\n"
        "  lib/c.py: k_c: 2 distinct launch(es)\n")
    (tmp_path / "manifest.csv").write_text(
        "repo,commit,path,operator\no/r,c,lib/a.py,op_a\no/r,c,lib/a.py,op_a2\no/r,c,lib/b.py,op_b\n"
        "o/r,c,lib/c.py,op_c\no/r,c,lib/__init__.py,-\n")
    good = {"kernel": "k_a", "title": "config", "stage": "", "reason": "1.6x faster"}
    fault = {"kernel": "k_b", "stage": "compile", "reason": "could not run: CUDA error: an illegal memory access"}
    for name, rep in {"lib_a": _report("lib/a.py", speedup=1.6, applied=[good], accepted=True),
                      "lib_b": _report("lib/b.py", rejected=[fault])}.items():
        (tmp_path / f"opt_{name}").mkdir()
        (tmp_path / f"opt_{name}" / "optimize-report.json").write_text(json.dumps(rep))
        (tmp_path / f"opt_{name}.err").write_text("")
    (tmp_path / "opt_lib_c.err").write_text("skipped: 3s left\n")  # tried, no report
    rows = summarize.collect([tmp_path])
    by_file = {r["file"]: r for r in rows}
    assert set(by_file) == {"lib/a.py", "lib/b.py", "lib/c.py"}
    assert by_file["lib/a.py"]["verified_faster"] and by_file["lib/a.py"]["launches"] == 3
    assert by_file["lib/a.py"]["operators"] == ["op_a", "op_a2"]
    assert by_file["lib/b.py"]["faults"] == 1 and by_file["lib/b.py"]["speedup"] == 1.0
    assert by_file["lib/c.py"]["error"].startswith("no report") and not by_file["lib/c.py"]["verified_faster"]
    text, summary = summarize.render(rows)
    assert abs(summary["geomean_speedup"] - 1.6 ** (1 / 3)) < 1e-9
    assert summary["files_faster"] == 1 and summary["operators_faster"] == 2 and summary["operators"] == 4
    assert summary["faults_in_timing_process"] == 1 and "must be 0" in text


def test_accepted_but_not_faster_is_not_counted() -> None:
    """A final text verified correct but timed no faster (speedup <= 1, or nothing applied) stays at 1.0x."""
    rep = _report("lib/a.py", speedup=0.98, accepted=True)["files"][0]
    row = summarize.file_row(rep, {"k": 1}, ["op"])
    assert not row["verified_faster"] and row["speedup"] == 1.0
