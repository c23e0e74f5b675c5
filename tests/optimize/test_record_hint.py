"""A kernel compiled on guessed values names the exact `tritonlens record -- pytest ...` command of the workspace
test that launches it (CLI message and the finding's data, which the editor's record action runs)."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.core.findings import Finding, Severity
from tritonlens.server.engine.diagnose.run import _GENERIC_RECORD, _with_record_command
from tritonlens.server.engine.record.suggest import record_hint


def test_the_finding_names_the_test_that_launches_the_kernel(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    (tmp_path / "pkg").mkdir()
    kernel = tmp_path / "pkg" / "rms_norm.py"
    kernel.write_text("import triton\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_rms_norm.py").write_text("from pkg.rms_norm import rms\n")
    argv, text = record_hint(str(kernel)) or ([], "")
    assert argv == ["pytest", "-q", "tests/test_rms_norm.py"]
    assert text == "tritonlens record -- pytest -q tests/test_rms_norm.py"
    finding = Finding(code="TL002", severity=Severity.INFO, message=f"assumed values. Record real launches ({_GENERIC_RECORD})",
                      span=None, data={"assumed": {"BLOCK": 1024}})  # type: ignore[arg-type]
    [out] = _with_record_command([finding], str(kernel))
    assert "`tritonlens record -- pytest -q tests/test_rms_norm.py`" in out.message
    assert out.data["record_command"] == argv
    # no test or script launches it: the generic hint stays
    lone = tmp_path / "pkg" / "other.py"
    lone.write_text("import triton\n")
    assert record_hint(str(lone)) is None
    assert _with_record_command([finding], str(lone))[0].message == finding.message
