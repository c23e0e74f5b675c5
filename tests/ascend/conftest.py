"""Fixtures for the Ascend tests; the helpers live in ascend_cases.py (imported by file name)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ascend_cases

from ascend_cases import ASCEND_PYTHON  # noqa: E402


@pytest.fixture(scope="session")
def ascend_python() -> Path:
    if not ASCEND_PYTHON.exists():
        pytest.skip(f"triton-ascend environment missing ({ASCEND_PYTHON}); run scripts/bootstrap --all")
    probe = subprocess.run(
        [str(ASCEND_PYTHON), "-c", "import triton.backends.ascend"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0 and "pybind11" not in probe.stderr:
        pytest.skip(f"triton-ascend does not import: {probe.stderr.strip()[-300:]}")
    return ASCEND_PYTHON
