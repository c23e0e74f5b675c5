"""CLI behaviour that needs no runner environment: bad targets, missing environments, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    result = cli("check", "--level", "ir", "--target", "both", str(KERNELS / "elementwise.py"))
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


def test_ir_on_a_jit_helper_names_the_kernels_that_inline_it(cli, tmp_path: Path, monkeypatch) -> None:
    # compiling a helper alone used to fail with a frontend error blamed on "a helper in another file"
    monkeypatch.setenv("TRITONLENS_CUDA_PYTHON", str(tmp_path / "no-such-python"))  # must not get that far
    path = tmp_path / "act.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef _silu(x):\n    return x * tl.sigmoid(x)\n\n\n"
        "@triton.jit\ndef silu_kernel(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, _silu(tl.load(x_ptr + offs)))\n\n\n"
        "@triton.jit\ndef glu_kernel(x_ptr, u_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, _silu(tl.load(x_ptr + offs)) * tl.load(u_ptr + offs))\n",
        encoding="utf-8",
    )
    result = cli("ir", str(path), "--kernel", "_silu", "--stage", "ttgir")
    assert result.rc == 2
    assert "_silu is a @triton.jit helper" in result.err
    assert "silu_kernel, glu_kernel" in result.err and "bootstrap" not in result.err


def _folder_with_undecodable_file(folder: Path) -> Path:
    (folder / "legacy.py").write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))  # not UTF-8
    (folder / "kernel.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, BLOCK):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)\n",
        encoding="utf-8",
    )
    return folder


def test_check_folder_reports_an_undecodable_file_and_checks_the_rest(cli, tmp_path: Path) -> None:
    result = cli("check", str(_folder_with_undecodable_file(tmp_path)))
    assert result.rc == 2  # something could not be read
    assert "cannot read" in result.err and "legacy.py" in result.err
    assert "kernel.py:6:" in result.out and "TL101" in result.out  # the readable file was still checked


@pytest.mark.cuda_env
def test_check_ir_folder_goes_on_past_an_undecodable_file(
    cli, cuda_env, compile_cache, tmp_path: Path
) -> None:
    result = cli("check", "--level", "ir", "--target", "sm_90", str(_folder_with_undecodable_file(tmp_path)))
    assert result.rc == 2 and "cannot read" in result.err and "legacy.py" in result.err
    assert "kernel.py:6:" in result.out and "TL101" in result.out


def test_select_or_ignore_matching_no_rule_is_a_usage_error(cli) -> None:
    # a typo in --select used to report "0 finding(s)" and exit 0, as if the file were clean
    path = str(KERNELS / "elementwise.py")
    result = cli("check", "--select", "TL9", path)
    assert result.rc == 2 and "--select TL9 matches no rule" in result.err
    result = cli("check", "--ignore", "TL1x,TL301", path)
    assert result.rc == 2 and "--ignore TL1X matches no rule" in result.err and "TL301" not in result.err
    result = cli("check", "--level", "ir", "--target", "sm_90", "--select", "TL3O1", path)
    assert result.rc == 2 and "TL3O1" in result.err
    assert cli("check", "--select", "tl1,TL30", "--ignore", "TL2", path).rc in (0, 1)  # prefixes, any case


def test_annotate_puts_markers_before_attributed_lines() -> None:
    from tritonlens.server.commands.ir import annotate

    source = "a = 1\nb = 2\nc = 3\n"
    ir = "op0\nop1\nop2\nop3\n"
    text = annotate(ir, [(2, 2), (2, 3), (3, 4), (1, 3)], source, "f.py", "//")
    assert text.splitlines() == ["op0", "// ---- f.py:2  b = 2", "op1", "op2", "// ---- f.py:3  c = 3", "op3"]
