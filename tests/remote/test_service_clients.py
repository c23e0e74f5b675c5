"""Per-client tokens (issue 21, deliverable 5): each client reads, waits on, streams and cancels only its own
jobs; another client's job is 404 (not 403), so ids do not leak; the single-token file keeps working."""

from __future__ import annotations

import uuid

import pytest
import requests
from remote_service import serve

from tritonlens.ascend_runner import cli as runner_cli
from tritonlens.ascend_runner.remote_tokens import DEFAULT_CLIENT, TokenFileError, parse_tokens

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def job(job_id: str | None = None, **payload) -> dict:
    return {"schema": 1, "id": job_id or uuid.uuid4().hex, "kind": "run", "backend": "interpret", "payload": payload}


@pytest.fixture
def two_clients(tmp_path):
    with serve(tmp_path, token="", tokens={"alice": ALICE, "bob": BOB}, max_queue=4) as running:
        yield running


def test_a_client_cannot_read_wait_stream_or_cancel_another_clients_job(two_clients):
    url, _runner = two_clients
    body = job(sleep_s=5)
    made = requests.post(f"{url}/v1/jobs", json=body, headers=auth(ALICE), timeout=5)
    assert made.status_code == 202
    where = f"{url}/v1/jobs/{body['id']}"
    assert requests.get(where, headers=auth(BOB), timeout=5).status_code == 404
    assert requests.get(f"{where}?wait_s=0.2", headers=auth(BOB), timeout=5).status_code == 404
    assert requests.get(f"{where}/events", headers=auth(BOB), timeout=5).status_code == 404
    assert requests.delete(where, headers=auth(BOB), timeout=5).status_code == 404
    # Bob's attempts changed nothing: the job is still Alice's, still alive, and she can cancel it.
    mine = requests.get(where, headers=auth(ALICE), timeout=5)
    assert mine.status_code == 200 and mine.json()["state"] in ("queued", "running")
    assert requests.delete(where, headers=auth(ALICE), timeout=5).status_code == 200
    done = requests.get(f"{where}?wait_s=5", headers=auth(ALICE), timeout=10).json()
    assert done["state"] == "cancelled"


def test_the_same_id_in_two_clients_is_two_jobs_and_no_conflict(two_clients):
    url, _runner = two_clients
    same = uuid.uuid4().hex
    a = requests.post(f"{url}/v1/jobs?wait_s=5", json=job(same, echo="a"), headers=auth(ALICE), timeout=10)
    b = requests.post(f"{url}/v1/jobs?wait_s=5", json=job(same, echo="b"), headers=auth(BOB), timeout=10)
    assert a.status_code == 202 and b.status_code == 202  # a 409 would tell Bob that Alice used the id
    assert requests.get(f"{url}/v1/jobs/{same}", headers=auth(ALICE), timeout=5).json()["result"]["result"][
        "echo"
    ] == "a"
    assert requests.get(f"{url}/v1/jobs/{same}", headers=auth(BOB), timeout=5).json()["result"]["result"][
        "echo"
    ] == "b"


def test_every_named_token_opens_the_service_and_others_do_not(two_clients):
    url, _runner = two_clients
    for token in (ALICE, BOB):
        assert requests.get(f"{url}/v1/health", headers=auth(token), timeout=5).status_code == 200
    assert requests.get(f"{url}/v1/health", headers=auth(ALICE + BOB), timeout=5).status_code == 401
    assert requests.get(f"{url}/v1/health", headers=auth(""), timeout=5).status_code == 401


def test_token_file_formats(tmp_path):
    assert parse_tokens("x" * 32 + "\n") == {DEFAULT_CLIENT: "x" * 32}  # the single-token file of old
    assert parse_tokens(f"# clients\nalice {ALICE}\n\nbob {BOB}\n") == {"alice": ALICE, "bob": BOB}
    for bad in (f"alice {ALICE}\nalice {BOB}", f"alice {ALICE}\nbob {ALICE}", "alice short", "a/b " + ALICE,
                f"alice {ALICE} extra", ""):
        with pytest.raises(TokenFileError):
            parse_tokens(bad)
    path = tmp_path / "tokens"
    path.write_text(f"alice {ALICE}\nbob {BOB}\n")
    path.chmod(0o600)
    assert runner_cli.read_tokens(str(path)) == {"alice": ALICE, "bob": BOB}
    path.write_text(f"alice {ALICE}\nbob {ALICE}\n")
    with pytest.raises(SystemExit, match="share a token"):
        runner_cli.read_tokens(str(path))
