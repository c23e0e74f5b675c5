"""Issue 14, item 16: every bundled example profiles on a machine without a GPU (`--backend interpret`), and a
profile leaves nothing in the user's folder (no __pycache__) or in the temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def cuda_python() -> str:
    try:
        return find_environment("cuda").python
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_profiles_on_the_cpu(example: Path, tmp_path: Path, cuda_python: str) -> None:
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(example, work / example.name)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {
        **os.environ,
        "TRITONLENS_CUDA_PYTHON": cuda_python,
        "TRITONLENS_CACHE_DIR": str(tmp_path / "cache"),
        "TMPDIR": str(temp),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tritonlens.server.cli",
            "profile",
            str(work / example.name),
            "--backend",
            "interpret",
            "--format",
            "json",
            "--timeout",
            "400",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=450,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)["result"]
    assert result["ok"] and result["launches"], result.get("errors")
    # Only the documented launch store may appear (it ignores itself in git); no __pycache__, no snapshots.
    assert sorted(p.name for p in work.iterdir() if p.name != ".tritonlens") == [example.name], (
        "the profile wrote into the user's folder"
    )
    store = work / ".tritonlens"
    if store.exists():
        assert {p.name for p in store.iterdir()} <= {"launches", ".gitignore"}, list(store.iterdir())
    assert list(temp.iterdir()) == [], f"left in the temporary folder: {list(temp.iterdir())}"
