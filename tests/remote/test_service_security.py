"""The runner service on loopback: credentials, size limits, malformed input, path traversal, queueing, cancel."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
import requests

from tritonlens.ascend_runner.remote_client import RemoteRunner, RemoteRunnerError

TOKEN = "t0ken-for-tests-0123456789abcdef"  # same as conftest.TOKEN
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def job(**payload) -> dict:
    return {"schema": 1, "id": uuid.uuid4().hex, "kind": "run", "backend": "interpret", "payload": payload}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer {TOKEN}x"},
    ],
)
def test_every_route_needs_the_token(service, headers):
    url, runner = service
    assert requests.get(f"{url}/v1/health", headers=headers, timeout=5).status_code == 401
    assert requests.post(f"{url}/v1/jobs", json=job(), headers=headers, timeout=5).status_code == 401
    assert requests.get(f"{url}/v1/jobs/abc", headers=headers, timeout=5).status_code == 401
    assert requests.delete(f"{url}/v1/jobs/abc", headers=headers, timeout=5).status_code == 401
    assert requests.get(f"{url}/openapi.json", headers=headers, timeout=5).status_code in (200, 401)
    assert runner.seen == []


def test_health_reports_backends(service):
    url, _ = service
    body = requests.get(f"{url}/v1/health", headers=AUTH, timeout=5).json()
    assert body["status"] == "ok" and body["runner"]["backends"]["interpret"]["available"]


def test_round_trip_through_remote_client(service):
    url, runner = service
    result = RemoteRunner(url, TOKEN).submit(job(echo="hello"), timeout_s=20)
    assert result["ok"] and result["result"]["echo"] == "hello"
    assert len(runner.seen) == 1


def test_wrong_token_is_a_clear_client_error(service):
    url, _ = service
    with pytest.raises(RemoteRunnerError, match="401"):
        RemoteRunner(url, "nope").health()


def test_unreachable_runner_is_a_clear_client_error():
    with pytest.raises(RemoteRunnerError, match="not reachable"):
        RemoteRunner("http://127.0.0.1:9", TOKEN, connect_timeout_s=2).health()


def test_oversize_body_is_refused(service):
    url, runner = service
    big = job(echo="x" * (128 * 1024))
    resp = requests.post(
        f"{url}/v1/jobs",
        data=json.dumps(big),
        headers={**AUTH, "Content-Type": "application/json"},
        timeout=10,
    )
    assert resp.status_code == 413
    assert runner.seen == []


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"schema": 1}',
        json.dumps({**job(), "kind": "rm"}).encode(),
        json.dumps({**job(), "id": "../../etc"}).encode(),
        json.dumps({**job(), "schema": 99}).encode(),
    ],
)
def test_malformed_jobs_are_422(service, body):
    url, runner = service
    resp = requests.post(
        f"{url}/v1/jobs", data=body, headers={**AUTH, "Content-Type": "application/json"}, timeout=5
    )
    assert resp.status_code == 422, resp.text
    assert runner.seen == []


@pytest.mark.parametrize(
    "name", ["../evil.py", "/etc/passwd", "a/../../b.py", ".hidden/x.py", "a\\..\\b.py", ""]
)
def test_path_traversal_in_uploaded_names_is_refused(service, name):
    url, runner = service
    resp = requests.post(f"{url}/v1/jobs", json=job(files={name: "print(1)"}), headers=AUTH, timeout=5)
    assert resp.status_code == 422, resp.text
    assert runner.seen == []


def test_uploaded_files_land_in_a_per_job_sandbox_that_is_removed(service, tmp_path):
    url, _ = service
    result = RemoteRunner(url, TOKEN).submit(job(files={"pkg/harness.py": "X = 1"}), timeout_s=20)
    assert result["result"]["files"] == {"pkg/harness.py": "X = 1"}
    assert not any((tmp_path / "sandboxes").glob("*/pkg/harness.py"))


def test_client_cannot_choose_the_workdir(service):
    url, _ = service
    resp = requests.post(f"{url}/v1/jobs", json=job(workdir="/"), headers=AUTH, timeout=5)
    assert resp.status_code == 422


def test_duplicate_job_id_is_409(service):
    url, _ = service
    body = job()
    assert requests.post(f"{url}/v1/jobs?wait_s=5", json=body, headers=AUTH, timeout=10).status_code == 202
    assert requests.post(f"{url}/v1/jobs", json=body, headers=AUTH, timeout=10).status_code == 409


def test_queue_limit_then_cancel(service):
    url, _ = service
    # max_concurrency=1, max_queue=2: three slow jobs fill it, the fourth is refused.
    ids = []
    for _ in range(3):
        body = job(sleep_s=30)
        ids.append(body["id"])
        assert requests.post(f"{url}/v1/jobs", json=body, headers=AUTH, timeout=5).status_code == 202
    assert requests.post(f"{url}/v1/jobs", json=job(), headers=AUTH, timeout=5).status_code == 429
    for job_id in ids:
        assert requests.delete(f"{url}/v1/jobs/{job_id}", headers=AUTH, timeout=5).status_code == 200
    states = [
        requests.get(f"{url}/v1/jobs/{i}?wait_s=10", headers=AUTH, timeout=20).json()["state"] for i in ids
    ]
    assert states == ["cancelled"] * 3
    assert (
        requests.post(f"{url}/v1/jobs?wait_s=5", json=job(), headers=AUTH, timeout=10).json()["state"]
        == "done"
    )


def test_client_cancel_event_cancels_on_the_server(service):
    url, _ = service
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    result = RemoteRunner(url, TOKEN).submit(job(sleep_s=60), cancel=cancel, timeout_s=120)
    assert result["ok"] is False and result["error"] == "cancelled"
    assert time.monotonic() - started < 10


def test_runner_failure_is_reported_and_service_keeps_serving(service):
    url, _ = service
    body = requests.post(
        f"{url}/v1/jobs?wait_s=5", json=job(**{"raise": True}), headers=AUTH, timeout=10
    ).json()
    assert body["state"] == "failed" and "worker exploded" in body["error"]
    assert requests.get(f"{url}/v1/health", headers=AUTH, timeout=5).status_code == 200


def test_progress_events_stream_until_done(service):
    url, _ = service
    body = job(sleep_s=0.3)
    requests.post(f"{url}/v1/jobs", json=body, headers=AUTH, timeout=5)
    with requests.get(f"{url}/v1/jobs/{body['id']}/events", headers=AUTH, stream=True, timeout=20) as resp:
        states = [json.loads(line)["state"] for line in resp.iter_lines() if line.strip()]
    assert states[0] in ("queued", "running") and states[-1] == "done"
