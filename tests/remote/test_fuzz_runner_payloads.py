"""Fuzz runner payloads (issue 14): the protocol validators and a real `tritonlens-runner serve` on loopback.

Every case must be accepted or refused with a clear error: the validators raise only their own error types (never
TypeError, OverflowError, ...), the service answers every request below 500 within HANG_S seconds, stays healthy,
and every job it accepted finishes. CI profile: a few hundred cases (well under a minute). Long profile, by hand:
`TRITONLENS_FUZZ=long .venv/bin/pytest -q tests/remote/test_fuzz_runner_payloads.py -s` (10,000 cases each; the
numbers of the last run are in docs/hardening.md).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_payloads import HANG_S, LONG, PAYLOAD_BY_KIND, envelopes, plausible_envelopes

from tritonlens.ascend_runner import protocol
from tritonlens.ascend_runner.remote_sandbox import SandboxError, confine_payload

pydantic = pytest.importorskip("pydantic")
from tritonlens.ascend_runner.remote_server import JobIn  # noqa: E402

VALIDATORS = {
    "compile": protocol.compile_request_from,
    "run": protocol.run_request_from,
    "profile": protocol.profile_request_from,
    "verify": protocol.verify_request_from,
}
TOKEN = "fuzz-token-0123456789abcdef-xyz"
STATS: Counter[str] = Counter()
SLOWEST: dict[str, float] = {}  # slowest request or validation, seconds
STARTED = time.monotonic()


@pytest.fixture(scope="module", autouse=True)
def report():
    """Counts of the whole module, printed (pytest -s) and saved to TRITONLENS_FUZZ_REPORT if set."""
    yield
    summary = ", ".join(f"{k} {v}" for k, v in sorted(STATS.items()))
    slowest = {k: round(v, 3) for k, v in SLOWEST.items()}
    print(f"\nrunner payload fuzz ({'long' if LONG else 'ci'} profile): {summary}; slowest {slowest}")
    out = os.environ.get("TRITONLENS_FUZZ_REPORT")
    if out:
        data = {
            "profile": "long" if LONG else "ci",
            "counts": dict(sorted(STATS.items())),
            "slowest_step_s": slowest,
            "hang_limit_s": HANG_S,
            "wall_s": round(time.monotonic() - STARTED, 1),
        }
        path = Path(out)
        merged = json.loads(path.read_text()) if path.exists() else {}
        merged["runner_payloads"] = data
        path.write_text(json.dumps(merged, indent=1) + "\n")


def fuzz_settings(ci: int) -> settings:
    """`ci` cases by default, 10,000 with TRITONLENS_FUZZ=long, N with TRITONLENS_FUZZ_EXAMPLES=N."""
    return settings(
        max_examples=int(os.environ.get("TRITONLENS_FUZZ_EXAMPLES") or (10_000 if LONG else ci)),
        deadline=HANG_S * 1000,
        derandomize=not LONG,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@fuzz_settings(500)
@given(envelopes())
def test_validators_accept_or_refuse_clearly(job) -> None:
    STATS["validators:cases"] += 1
    started = time.monotonic()
    try:
        protocol.check_job(job)
        STATS["validators:envelope-ok"] += 1
    except protocol.ProtocolError:
        STATS["validators:envelope-refused"] += 1
    kind = job.get("kind")
    payload = job.get("payload")
    if isinstance(kind, str) and kind in VALIDATORS:  # any JSON value may be the kind, lists too
        try:
            VALIDATORS[kind](payload)
            STATS["validators:payload-ok"] += 1
        except protocol.ProtocolError:
            STATS["validators:payload-refused"] += 1
        if isinstance(payload, dict):
            try:
                confine_payload(kind, payload, None, [])
            except SandboxError:
                STATS["validators:path-refused"] += 1
    try:
        JobIn.model_validate(job)
    except pydantic.ValidationError:
        pass
    took = time.monotonic() - started
    SLOWEST["validators"] = max(SLOWEST.get("validators", 0.0), took)
    assert took < HANG_S


@fuzz_settings(500)
@given(st.sampled_from(sorted(PAYLOAD_BY_KIND)).flatmap(lambda k: st.tuples(st.just(k), PAYLOAD_BY_KIND[k])))
def test_payload_validators_on_payloads_alone(case) -> None:
    kind, payload = case
    STATS["payloads:cases"] += 1
    try:
        VALIDATORS[kind](payload)
    except protocol.ProtocolError:
        pass


# --- the real service -------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """`tritonlens-runner serve` as its own process, both environments pointed at this Python (no triton, no
    torch): accepted jobs reach real workers and fail fast there, so many cases run in little time."""
    pytest.importorskip("uvicorn")
    folder = tmp_path_factory.mktemp("fuzz-service")
    token = folder / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    config = folder / "runner.json"
    config.write_text(
        json.dumps(
            {
                "cuda": {"python": sys.executable},
                "ascend": {"python": sys.executable},
                "warm_up": False,
                "cache": False,
                "timeout_s": 8,
            }
        )
    )
    port = _free_port()
    log = (folder / "service.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tritonlens.ascend_runner.cli",
            "serve",
            "--port",
            str(port),
            "--token-file",
            str(token),
            "--config",
            str(config),
            "--max-queue",
            "64",
            "--sandbox-root",
            str(folder / "jobs"),
        ],
        stdout=subprocess.DEVNULL,
        # A file, not a pipe nobody reads: a full pipe would block the service's logging (looks like a hang).
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(f"{url}/v1/health", timeout=1)
            break
        except requests.RequestException:
            if proc.poll() is not None:
                pytest.fail(f"the service did not start: {(folder / 'service.log').read_text()[-2000:]}")
            time.sleep(0.2)
    yield url, proc
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@fuzz_settings(150)
@given(
    job=st.one_of(envelopes(), plausible_envelopes(), plausible_envelopes()),
    wait=st.sampled_from(["0", "0.2", "nan", "-1", "1e309"]),
    raw=st.integers(0, 9),
)
def test_service_never_crashes_or_hangs(live, job, wait, raw) -> None:
    url, proc = live
    STATS["service:cases"] += 1
    if isinstance(job.get("id"), str) and job["id"].replace("-", "").replace("_", "").isalnum():
        job = {**job, "id": f"{job['id'][:30]}-{uuid.uuid4().hex}"}  # fresh ids: not all 409s
    body = json.dumps(job, allow_nan=True, default=str)  # NaN and Infinity go over the wire as JS tokens
    if raw == 0:
        body = body[: len(body) // 2]  # a truncated body: not JSON
    started = time.monotonic()
    reply = requests.post(
        f"{url}/v1/jobs?wait_s={wait}", data=body.encode(), headers=AUTH, timeout=HANG_S + 5
    )
    took = time.monotonic() - started
    SLOWEST["service"] = max(SLOWEST.get("service", 0.0), took)
    STATS[f"service:{reply.status_code}"] += 1
    assert reply.status_code < 500, reply.text[:500]
    assert took < HANG_S, f"{took:.1f} s for one request"
    assert proc.poll() is None, "the service died"
    if reply.status_code == 202:
        state = reply.json()
        job_id = state["id"]
        reply = requests.get(f"{url}/v1/jobs/{job_id}?wait_s=9", headers=AUTH, timeout=HANG_S + 5)
        assert reply.status_code < 500
        final = reply.json()["state"]
        STATS[f"service:job-{final}"] += 1
        assert final in ("done", "failed", "cancelled"), f"job {job_id} still {final} after 9 s"


def test_service_is_healthy_after_fuzzing(live) -> None:
    url, proc = live
    health = requests.get(f"{url}/v1/health", headers=AUTH, timeout=HANG_S)
    assert health.status_code == 200 and proc.poll() is None
    STATS["service:healthy-after"] += 1
