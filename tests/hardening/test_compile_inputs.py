"""Issue 14 item 17: what decides a recompile covers everything a kernel's specialization reads."""

from __future__ import annotations

from pathlib import Path

from tritonlens.server.engine.diagnose import inputs
from tritonlens.server.engine.diagnose.inputs import compile_inputs_digest, read_compile_inputs, text_digest

SOURCE = """import triton
import triton.language as tl

SCALE = 2


@triton.jit
def helper(x):
    return x * 2


@triton.jit
def k(X, N, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(X + offs, helper(tl.load(X + offs, mask=offs < N)), mask=offs < N)


@triton.jit
def other(X):
    tl.store(X, 1.0)


def run(x):
    k[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK_SIZE=128)
"""


def test_inputs_outside_the_kernel_change_the_digest():
    base = text_digest(SOURCE, "k")
    assert base is not None
    changed = {
        "launch site": SOURCE.replace("BLOCK_SIZE=128)", "BLOCK_SIZE=96)"),
        "module constant": SOURCE.replace("SCALE = 2", "SCALE = 3"),
        "helper": SOURCE.replace("return x * 2", "return x * 3"),
        "pragma": SOURCE.replace("def other(X):", "def other(X):  # tritonlens: k BLOCK_SIZE=64"),
        "kernel": SOURCE.replace("mask=offs < N)), mask", "mask=offs < N) + 1), mask"),
    }
    for what, text in changed.items():
        assert text != SOURCE, what
        assert text_digest(text, "k") != base, what
    # an edit inside another kernel's body is not something k's compile reads
    assert text_digest(SOURCE.replace("tl.store(X, 1.0)", "tl.store(X, 2.0)"), "k") == base
    assert text_digest(SOURCE, "missing") is None and text_digest("def f(:\n", "k") is None


def test_pyproject_overrides_change_the_digest(tmp_path: Path):
    path = tmp_path / "kern.py"
    path.write_text(SOURCE)
    before = compile_inputs_digest(SOURCE, str(path), "k")
    (tmp_path / "pyproject.toml").write_text("[tool.tritonlens.kernels.k]\nBLOCK_SIZE = 256\n")
    after = compile_inputs_digest(SOURCE, str(path), "k")
    assert before is not None and after is not None and before != after


def test_the_digest_and_the_compile_read_the_same_inputs_once(tmp_path: Path, monkeypatch):
    """The language server hands the values behind the digest to the compile: one read of each file."""
    path = tmp_path / "kern.py"
    path.write_text(SOURCE)
    (tmp_path / "pyproject.toml").write_text("[tool.tritonlens.kernels.k]\nBLOCK_SIZE = 256\n")
    reads: list[str] = []
    real_overrides, real_recorded = inputs.find_pyproject_overrides, inputs.recorded_for
    monkeypatch.setattr(inputs, "find_pyproject_overrides", lambda p: reads.append("pyproject") or real_overrides(p))
    monkeypatch.setattr(inputs, "recorded_for", lambda *a: reads.append("launches") or real_recorded(*a))
    read = read_compile_inputs(SOURCE, str(path), "k")
    assert reads == ["pyproject", "launches"]
    assert read.overrides == {"kernels": {"k": {"BLOCK_SIZE": 256}}} and read.recorded == []
    assert read.digest == compile_inputs_digest(SOURCE, str(path), "k")
    reads.clear()
    assert read_compile_inputs(SOURCE, str(path), "missing").digest is None and reads == []  # nothing to compile
