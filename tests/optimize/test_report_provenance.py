"""The "where it ran" block of optimize, bench and profile reports, for each kind of runner: what the job results
said (device, versions, Ray node) and what the runner is (local interpreters, a remote URL, a Ray address)."""

from __future__ import annotations

from typing import Any

from tritonlens.server.provenance import Recorder, markdown_lines, provenance

DEVICE = {"name": "NVIDIA H200", "versions": {"triton": "3.6.0", "torch": "2.9.0", "driver": "570.1", "python": "3.11"}}


class FakeRay:
    address = "ray://head:10001"

    def submit(self, job: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {"ok": True, "result": {"device": DEVICE}, "ray": {"shape": "gpu", "node_id": "n1", "host": "w1", "gpus": [0]}}

    def close(self) -> None:
        pass


class FakeRemote:
    url = "https://runner.example:8443"

    def profile(self, backend: str, payload: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {"ok": True, "result": {"device": DEVICE}}


def test_ray_results_name_the_address_the_node_and_the_versions() -> None:
    runner = Recorder(FakeRay())
    runner.submit({"id": "1"})
    runner.submit({"id": "2"})  # same node twice: listed once
    prov = provenance(runner, runner.runner, "ray://head:10001", "cuda")
    assert prov["runner"]["kind"] == "ray" and prov["runner"]["address"] == "ray://head:10001"
    assert prov["runner"]["nodes"] == [{"node_id": "n1", "host": "w1", "gpus": [0]}]
    assert prov["devices"] == [{"name": "NVIDIA H200"}] and prov["versions"]["driver"] == "570.1"
    text = "\n".join(markdown_lines(prov))
    assert "ray (ray://head:10001)" in text and "Ray node n1 on w1" in text and "driver 570.1" in text


def test_a_remote_runner_names_its_url_and_nothing_reported_is_unknown() -> None:
    runner = Recorder(FakeRemote())
    prov = provenance(runner, runner.runner, FakeRemote.url, "cuda")
    assert prov["runner"] == {"spec": FakeRemote.url, "class": "FakeRemote", "kind": "remote", "url": FakeRemote.url}
    assert prov["devices"] == "unknown" and prov["versions"] == "unknown"  # no job ran: nothing is guessed
    runner.profile("cuda", {})
    assert provenance(runner, runner.runner, FakeRemote.url, "cuda")["versions"]["torch"] == "2.9.0"
    assert prov["tritonlens"]["version"]
