"""CLI behaviour that needs no runner environment: bad targets, missing environments, bad files."""

from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "kernels"


def test_missing_runner_environment_explains_setup(cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRITONLENS_CUDA_PYTHON", str(tmp_path / "no-such-python"))
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    result = cli("check", "--level", "ir", "--target", "sm_90", str(KERNELS / "elementwise.py"))
    assert result.rc == 2
    assert "no runner environment for target sm_90" in result.err
    assert "scripts/bootstrap" in result.err
    result = cli("ir", str(KERNELS / "elementwise.py"), "--kernel", "add_kernel", "--stage", "ptx")
    assert result.rc == 2
    assert "scripts/bootstrap" in result.err


def test_level_ir_needs_a_compile_target(cli) -> None:
    result = cli("check", "--level", "ir", str(KERNELS / "elementwise.py"))
    assert result.rc == 2
    assert "--level ir needs a compile target" in result.err and "sm_90" in result.err


def test_ir_rejects_stage_target_mismatch_and_unknown_kernel(cli) -> None:
    path = str(KERNELS / "elementwise.py")
    result = cli("ir", path, "--kernel", "add_kernel", "--stage", "ttadapter", "--target", "sm_90")
    assert result.rc == 2 and "only for Ascend targets" in result.err
    result = cli("ir", path, "--kernel", "add_kernel", "--stage", "sass", "--target", "ascend910b3")
    assert result.rc == 2 and "only for NVIDIA targets" in result.err
    result = cli("ir", path, "--kernel", "nope", "--stage", "ttgir")
    assert result.rc == 2 and "no kernel 'nope'" in result.err and "add_kernel" in result.err
    result = cli("ir", str(KERNELS / "missing.py"), "--kernel", "k", "--stage", "ttgir")
    assert result.rc == 2 and "cannot read" in result.err


def test_annotate_puts_markers_before_attributed_lines() -> None:
    from tritonlens.server.commands.ir import annotate

    source = "a = 1\nb = 2\nc = 3\n"
    ir = "op0\nop1\nop2\nop3\n"
    text = annotate(ir, [(2, 2), (2, 3), (3, 4), (1, 3)], source, "f.py", "//")
    assert text.splitlines() == ["op0", "// ---- f.py:2  b = 2", "op1", "op2", "// ---- f.py:3  c = 3", "op3"]
