"""What a job can see of the runner service (issue 21, deliverable 5): it runs in its own private folder, not the
service's working directory; no variable of its environment holds a client's token; the service refuses a token
file that other users can read."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest
import requests
from remote_service import TOKEN, serve

from tritonlens.ascend_runner import cli as runner_cli
from tritonlens.ascend_runner.pool import PoolConfig, WorkerPool
from tritonlens.ascend_runner.remote_tokens import scrub_environment


class PoolRunner:
    """The service in front of a real worker pool; every job asks the worker what it sees (test hook)."""

    def __init__(self) -> None:
        self.pool = WorkerPool(
            PoolConfig(python=sys.executable, size=1, env={"TRITONLENS_WORKER_TEST_HOOKS": "1"}, name="exposure")
        )

    def submit(self, job, *, cancel=None, timeout_s=None, on_start=None):
        probe = {**job, "kind": "_fault", "payload": {**job["payload"], "action": "where"}}
        return self.pool.submit(probe, cancel=cancel, timeout_s=30, on_start=on_start)

    def health(self):
        return {}

    def close(self) -> None:
        self.pool.close()


def test_a_job_runs_in_its_own_folder_and_sees_no_token(tmp_path, monkeypatch):
    service_cwd = tmp_path / "service-cwd"
    service_cwd.mkdir()
    monkeypatch.chdir(service_cwd)
    monkeypatch.setenv("RUNNER_TOKEN_FOR_DEPLOY", TOKEN)  # an operator kept the token in a variable too
    assert scrub_environment(os.environ, [TOKEN]) == ["RUNNER_TOKEN_FOR_DEPLOY"]  # as `serve` does at start
    runner = PoolRunner()
    with serve(tmp_path, runner=runner) as (url, _):
        body = {"schema": 1, "id": uuid.uuid4().hex, "kind": "run", "backend": "interpret",
                "payload": {"files": {"k.py": "x = 1\n"}}}
        reply = requests.post(f"{url}/v1/jobs?wait_s=30", json=body,
                              headers={"Authorization": f"Bearer {TOKEN}"}, timeout=40).json()
    assert reply["state"] == "done", reply
    seen = reply["result"]["result"]
    cwd = Path(seen["cwd"])
    assert cwd != service_cwd and service_cwd not in cwd.parents
    assert (tmp_path / "sandboxes") in cwd.parents and cwd.name.startswith(body["id"])  # the job's own folder
    assert not any(TOKEN in value for value in seen["env"].values())


def test_scrub_removes_only_variables_holding_a_token():
    environ = {"A": "x", "B": f"Bearer {TOKEN}", "C": TOKEN, "D": "tok"}
    assert scrub_environment(environ, [TOKEN]) == ["B", "C"]
    assert environ == {"A": "x", "D": "tok"}


def test_the_service_refuses_a_token_file_others_can_read(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\n")
    path.chmod(0o644)
    with pytest.raises(SystemExit, match="readable by other users"):
        runner_cli.read_tokens(str(path))
    path.chmod(0o600)
    assert runner_cli.read_tokens(str(path)) == {"default": TOKEN}
