"""ascend_runner/worker/compile_hivm.py on its own: the bishengir-compile call, its timeout, its clean-up, and a
clear answer when the binary is missing (the worker module is stdlib-only, so the test's Python can load it)."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ascend"
BIN = sorted((ROOT / ".envs" / "ascend").glob("lib/python3*/site-packages/ascendnpuir/bin"))


def load_worker():
    spec = importlib.util.spec_from_file_location(
        "compile_hivm", ROOT / "ascend_runner" / "worker" / "compile_hivm.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_options_follow_triton_ascend_per_architecture() -> None:
    w = load_worker()
    a2 = w.compile_options("Ascend910B3", False, {"multibuffer": True, "sync_solver": True})
    assert a2[0] == "--target=Ascend910B3" and "--enable-hivm-compile=true" in a2
    assert "--enable-auto-multi-buffer=true" in a2 and "--enable-hivm-graph-sync-solver=true" in a2
    a5 = w.compile_options("Ascend950PR_9599", True, {"multibuffer": False, "sync_solver": True})
    assert "--enable-hivm-compile=true" not in a5 and not any("graph-sync-solver" in o for o in a5)
    assert "--enable-auto-multi-buffer=false" in a5


def test_missing_compiler_is_said_plainly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    w = load_worker()
    monkeypatch.setenv("TRITONLENS_BISHENGIR_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(w.importlib.util, "find_spec", lambda name: None)
    run = w.run_hivm("module {}", "Ascend910B3", False, {})
    assert run["status"] == "unavailable" and "ascendnpu-ir" in run["message"]


@pytest.mark.ascend_env
@pytest.mark.skipif(not BIN, reason="ascendnpu-ir is not installed in .envs/ascend (scripts/bootstrap --all)")
def test_runs_to_hivmc_and_cleans_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    w = load_worker()
    monkeypatch.setenv("TRITONLENS_BISHENGIR_DIR", str(BIN[0]))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a private temp root: only this test's dirs
    run = w.run_hivm((FIXTURES / "add.ttadapter").read_text(), "Ascend910B3", False, {"multibuffer": True})
    assert run["status"] == "hivmc-missing", run.get("log")
    assert "hivm" in run["stages"] and "hivm.plan-memory" in run["stages"]
    assert 'loc("tests/ascend/kernels/add_kernel.py"' in run["stages"]["hivm"]
    slow = w.run_hivm((FIXTURES / "matmul.ttadapter").read_text(), "Ascend910B3", False, {}, timeout_s=0.01)
    assert slow["status"] == "timeout" and "did not finish" in slow["message"]
    assert list(tmp_path.iterdir()) == []  # the private temporary directory is gone on both paths
