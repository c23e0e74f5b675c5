"""A typed request (protocol.VerifyRequest and friends, as the engine sends them) carries `backend: None` unless
the sender fills it; the worker then takes the envelope's backend, as for a payload without the key."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tritonlens.ascend_runner.protocol import HarnessSpec, VerifyRequest, new_job

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker_main() -> Any:
    spec = importlib.util.spec_from_file_location("tl_worker_main_under_test", ROOT / "ascend_runner/worker/main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # stdlib only: nothing runs at import
    return module


@pytest.mark.parametrize("backend_in_payload, expected", [(None, "interpret"), ("cuda", "cuda")])
def test_the_envelopes_backend_fills_a_typed_requests_empty_one(worker_main, monkeypatch, backend_in_payload,
                                                               expected):
    seen: list[dict[str, Any]] = []
    monkeypatch.setitem(worker_main.HANDLERS, "verify", lambda kind, payload: seen.append(payload) or {"ok": True})
    request = VerifyRequest(harness=HarnessSpec(mode="kernelbench", path="k.py"), backend=backend_in_payload)
    job = new_job("verify", "interpret", request)
    assert "backend" in job["payload"] and dataclasses.is_dataclass(request)
    reply = worker_main.run_one(job)
    assert reply["ok"], reply
    assert seen[0]["backend"] == expected
