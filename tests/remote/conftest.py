"""Fixtures for the runner service tests: a real service on a loopback port (see remote_service.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # remote_service, whoever imported conftest first

from remote_service import TOKEN, ScriptedRunner, serve  # noqa: E402

__all__ = ["TOKEN", "ScriptedRunner", "serve"]


@pytest.fixture
def service(tmp_path) -> Iterator[tuple[str, ScriptedRunner]]:
    with serve(tmp_path) as running:
        yield running
