"""Makes `triage_helpers` importable from this folder's tests and provides the data fixture."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from triage_helpers import DATA  # noqa: E402


@pytest.fixture
def data_source() -> callable:
    def read(name: str) -> str:
        return (DATA / name).read_text(encoding="utf-8")

    return read
