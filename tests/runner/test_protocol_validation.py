"""Malformed requests get clear messages: at the client (ProtocolError) and at the worker (error envelope)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.pool import WORKER_SCRIPT
from tritonlens.ascend_runner.protocol import CompileRequest, ProtocolError, new_job


@pytest.fixture()
def runner() -> LocalRunner:
    # No job below reaches a worker: validation happens first.
    return LocalRunner(
        {"cache": False, "cuda": {"python": sys.executable}, "ascend": {"python": sys.executable}}
    )


@pytest.mark.parametrize(
    ("job", "words"),
    [
        ([], "JSON object"),
        ({"schema": 1, "id": "x", "kind": "compile", "backend": "cuda"}, "missing field 'payload'"),
        ({"schema": 2, "id": "x", "kind": "compile", "backend": "cuda", "payload": {}}, "schema 2"),
        ({"schema": 1, "id": "x", "kind": "explode", "backend": "cuda", "payload": {}}, "unknown job kind"),
        ({"schema": 1, "id": "x", "kind": "run", "backend": "tpu", "payload": {}}, "unknown backend"),
        ({"schema": 1, "id": 3, "kind": "run", "backend": "cuda", "payload": {}}, "field 'id'"),
        (
            {"schema": 1, "id": "x", "kind": "compile", "backend": "cuda", "payload": {"source": 1}},
            "compile payload",
        ),
        (
            {
                "schema": 1,
                "id": "x",
                "kind": "compile",
                "backend": "cuda",
                "payload": {"source": "", "path": "p", "kernel": "k", "signature": {}, "target": "sm_42"},
            },
            "unknown target",
        ),
    ],
)
def test_malformed_jobs_are_rejected_with_the_reason(runner: LocalRunner, job: Any, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        runner.submit(job)


def test_compile_request_validation(runner: LocalRunner) -> None:
    with pytest.raises(ProtocolError, match="not an identifier"):
        runner.compile(CompileRequest(source="", path="p", kernel="1bad", signature={}))
    with pytest.raises(ProtocolError, match="divisibility names unknown"):
        runner.compile(
            CompileRequest(source="", path="p", kernel="k", signature={"x": "i32"}, divisibility=["y"])
        )
    with pytest.raises(ProtocolError):
        new_job("compile", "gpu", {})


def worker_exchange(lines: list[str]) -> list[dict[str, Any]]:
    """Talk to a worker directly (under this interpreter: protocol handling needs only the stdlib)."""
    proc = subprocess.run(
        [sys.executable, "-u", str(WORKER_SCRIPT)],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_worker_answers_every_line_even_garbage() -> None:
    replies = worker_exchange(
        [
            "this is not json",
            json.dumps([1, 2]),
            json.dumps({"schema": 9, "id": "a", "kind": "health", "payload": {}}),
            json.dumps({"schema": 1, "id": "b", "kind": "nope", "payload": {}}),
            json.dumps({"schema": 1, "id": "c", "kind": "health", "payload": []}),
            json.dumps({"schema": 1, "id": "d", "kind": "compile", "payload": {"target": "sm_1"}}),
            json.dumps({"schema": 1, "id": "e", "kind": "_fault", "payload": {"action": "echo"}}),
            json.dumps({"schema": 1, "id": "f", "kind": "health", "payload": {}}),
        ]
    )
    assert len(replies) == 8
    assert all(r["schema"] == 1 for r in replies)
    assert [r["ok"] for r in replies] == [False] * 7 + [True]
    messages = [r["error"]["message"] for r in replies[:7]]
    assert "not JSON" in messages[0]
    assert "JSON object" in messages[1]
    assert "schema 9" in messages[2]
    assert "unknown job kind 'nope'" in messages[3]
    assert "payload must be a JSON object" in messages[4]
    assert "unknown target 'sm_1'" in messages[5]
    assert "unknown job kind '_fault'" in messages[6]  # test hooks are off by default
    assert replies[7]["id"] == "f" and "python" in replies[7]["result"]


def test_worker_reports_missing_job_handlers_clearly(tmp_path: Path) -> None:
    # A worker folder holding only main.py: each handler module it would load is absent.
    lone = tmp_path / "main.py"
    shutil.copy(WORKER_SCRIPT, lone)
    jobs = [
        {"schema": 1, "id": "v", "kind": "verify", "payload": {}},
        {"schema": 1, "id": "c", "kind": "compile", "payload": {"target": "sm_90"}},
        {"schema": 1, "id": "a", "kind": "compile", "payload": {"target": "ascend910b4"}},
    ]
    proc = subprocess.run(
        [sys.executable, "-u", str(lone)],
        input="".join(json.dumps(j) + "\n" for j in jobs),
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["ok"] for r in replies] == [False, False, False]
    assert "worker/run_job.py is missing" in replies[0]["error"]["message"]
    assert "worker/compile_cuda.py is missing" in replies[1]["error"]["message"]
    assert "worker/compile_ascend.py is missing" in replies[2]["error"]["message"]


@pytest.mark.parametrize(
    "field",
    [
        {"divisibility": [None, True]},  # found by the payload fuzz: sorted() of mixed types raised TypeError
        {"divisibility": [["x"]]},  # unhashable: set() raised TypeError
        {"signature": {"x": ["i32"]}},
        {"constants": [1, 2]},
        {"options": {1: 2}},
    ],
)
def test_compile_payload_types_are_protocol_errors(field) -> None:
    from tritonlens.ascend_runner.protocol import compile_request_from

    raw = {"source": "", "path": "p.py", "kernel": "k", "signature": {"x": "i32"}, **field}
    with pytest.raises(ProtocolError):
        compile_request_from(raw)


@pytest.mark.parametrize(
    "payload",
    [
        {"timing": {"rep_ms": float("nan")}},
        {"timing": {"warmup_ms": "10"}},
        {"max_launches": 1.5},
        {"seed": float("inf")},
        {"ncu_timeout_s": float("inf")},
        {"artifacts_dir": 3},
        {"replay": {"snapshot": None}},
        {"files": {"a.py": 1}},
    ],
)
def test_run_payload_numbers_and_types_are_protocol_errors(payload) -> None:
    from tritonlens.ascend_runner.protocol import profile_request_from

    with pytest.raises(ProtocolError):
        profile_request_from({"harness": {"mode": "script", "path": "k.py"}, **payload})


@pytest.mark.parametrize(
    "payload", [{"shapes": None}, {"shapes": 3}, {"interleave": {"repeats": 1.5}}, {"candidate": 1}]
)
def test_verify_payload_shapes_are_protocol_errors(payload) -> None:
    from tritonlens.ascend_runner.protocol import verify_request_from

    with pytest.raises(ProtocolError):  # shapes=None raised TypeError (found by the payload fuzz)
        verify_request_from({"harness": {"mode": "kernelbench", "path": "k.py"}, **payload})
