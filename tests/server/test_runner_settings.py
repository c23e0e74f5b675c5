"""`tritonlens.runners` settings -> runner configs (ascend_runner/settings.py), the CLI that reads them, and the
pure pieces of level 2 / escalation in the server (backend choice, lens and hover text on a real H200 result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.factory import get_runner
from tritonlens.ascend_runner.remote_client import RemoteRunner
from tritonlens.ascend_runner.settings import RemoteSettings, RunnerSettings, parse_runner_settings
from tritonlens.server.commands.runners import load_runner_config
from tritonlens.server.engine.profile.jobs import (
    analyze_result,
    backend_from_health,
    backend_setting,
    device_missing,
    runner_lacks_device,
)
from tritonlens.server.engine.runner_survey import survey
from tritonlens.server.features.escalation import EscalationSettings, escalation_settings
from tritonlens.server.features.profile import ProfiledKernel, hover_markdown, lens_title

ROOT = Path(__file__).resolve().parents[2]
H200_ADD = ROOT / "benchmarks" / "gpu" / "results" / "run2" / "profile_add.json"
KB_COPY = ROOT / "benchmarks" / "gpu" / "kb_copy.py"


def test_client_shape_converts_for_each_runner_kind(tmp_path: Path) -> None:
    raw = {
        "local": {"cuda": ".envs/cuda/bin/python", "ascend": "/opt/asc/bin/python"},
        "remote": {"url": "https://npu-box:8443/", "tokenEnv": "NPU_TOKEN"},
    }
    settings, problems = parse_runner_settings(raw, str(tmp_path))
    assert problems == []
    assert settings.local == {
        "cuda": str(tmp_path / ".envs/cuda/bin/python"),
        "ascend": "/opt/asc/bin/python",
    }
    assert settings.remote == RemoteSettings("remote", "https://npu-box:8443", "NPU_TOKEN", None)
    # jobs go to the remote runner when one is configured; LocalRunner gets the interpreters
    assert settings.runner_config() == {"url": "https://npu-box:8443", "tokenEnv": "NPU_TOKEN"}
    assert settings.local_config(cache=False) == {
        "cuda": {"python": str(tmp_path / ".envs/cuda/bin/python")},
        "ascend": {"python": "/opt/asc/bin/python"},
        "cache": False,
    }


def test_configs_build_real_runners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token-0123456789\n")
    settings, problems = parse_runner_settings(
        {"remote": {"url": "http://127.0.0.1:9", "tokenFile": "token"}}, str(tmp_path)
    )
    assert problems == []
    runner = get_runner(settings.runner_config())
    assert isinstance(runner, RemoteRunner) and runner.url == "http://127.0.0.1:9"
    assert RemoteRunner.from_config(settings.remote.client_config())._token == "s3cret-token-0123456789"
    local, _ = parse_runner_settings({"local": {"cuda": "/nonexistent/python"}})
    with LocalRunner(local.local_config(cache=False)) as lr:
        assert "configured cuda python '/nonexistent/python'" in lr.health()["backends"]["cuda"]["message"]
    # an unset token variable is the remote client's clear error, not a crash
    monkeypatch.delenv("TL_TEST_UNSET_TOKEN", raising=False)
    env_only, _ = parse_runner_settings({"remote": {"url": "http://h:1", "tokenEnv": "TL_TEST_UNSET_TOKEN"}})
    with pytest.raises(RuntimeError, match=r"\$TL_TEST_UNSET_TOKEN is not set"):
        get_runner(env_only.runner_config())


def test_older_shapes_are_still_read() -> None:
    settings, problems = parse_runner_settings(
        {
            "cuda": {"python": "/py/cuda"},
            "remote": {
                "box": {"url": "http://a:1", "tokenEnv": "A"},
                "other": {"url": "http://b:2", "tokenFile": "/t"},
            },
        }
    )
    assert problems == []
    assert settings.local == {"cuda": "/py/cuda"}
    assert [r.name for r in settings.remotes] == ["box", "other"] and settings.remote.url == "http://a:1"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([1], "runners must be an object"),
        ({"local": "python3"}, "runners.local must map"),
        ({"local": {"rocm": "/p"}}, "unknown environment"),
        ({"local": {"cuda": 3}}, "path of a Python interpreter"),
        ({"remote": {"url": "ftp://x", "tokenEnv": "T"}}, "http:// or https:// URL"),
        ({"remote": {"url": "http://x"}}, "needs tokenEnv or tokenFile"),
        ({"remote": {"url": "http://x", "token": "abc", "tokenEnv": "T"}}, "never in settings"),
        ({"cuda": "/p"}, '{"python": PATH}'),
    ],
)
def test_bad_settings_are_named(raw: object, message: str) -> None:
    settings, problems = parse_runner_settings(raw)
    assert any(message in p for p in problems), problems
    assert "abc" not in json.dumps(settings.runner_config())  # a token in settings never reaches a runner


def test_cli_reads_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tritonlens.runners]\nlocal = { cuda = "missing/python" }\n'
        'remote = { url = "http://127.0.0.1:9", tokenEnv = "HOME" }\n'
    )
    (tmp_path / "pkg").mkdir()
    raw, base = load_runner_config(None, tmp_path / "pkg")
    assert base == tmp_path
    settings, problems = parse_runner_settings(raw, str(base))
    assert problems == [] and settings.local["cuda"] == str(tmp_path / "missing/python")
    rows = {r["name"]: r for r in survey(settings, probe_local=False)}
    assert rows["local cuda"]["reachable"] is False and "missing/python" in rows["local cuda"]["detail"]
    remote = rows["remote http://127.0.0.1:9"]
    assert remote["reachable"] is False and "not reachable" in remote["detail"]


def test_escalation_settings() -> None:
    assert escalation_settings(None) == (EscalationSettings(on_save=True, on_symptom=False), [])
    assert escalation_settings({"onSave": False, "onSymptom": True})[0] == EscalationSettings(False, True)
    settings, problems = escalation_settings({"onSave": "yes"})
    assert settings.on_save is True and problems == ["tritonlens.escalation.onSave must be true or false"]


def test_backend_choice_from_health() -> None:
    gpu = {"runner": {"backends": {"cuda": {"available": True, "devices": {"cuda": ["nvidia0"], "npu": []}}}}}
    npu = {  # a local runner's answer names its kind beside the backends (read as none before)
        "runner": "local",
        "backends": {"ascend": {"available": True, "worker": {"devices": {"cuda": [], "npu": ["davinci0"]}}}},
    }
    cpu = {"runner": {"backends": {"cuda": {"available": True, "devices": {"cuda": [], "npu": []}}}}}
    down = {"runner": {"backends": {"cuda": {"available": False, "devices": {"cuda": ["nvidia0"]}}}}}
    assert [backend_from_health(h) for h in (gpu, npu, cpu, down, {})] == [
        "cuda",
        "npu",
        "interpret",
        "interpret",
        "interpret",
    ]
    assert backend_setting("npu") == "npu" and backend_setting("auto") is None and backend_setting(3) is None
    # optimize and bench refuse a device backend once, up front, when a worker answered and saw no such device
    assert [device_missing(h, "cuda") is None for h in (gpu, npu, cpu, down, {})] == [True, False, False, True, True]
    assert "--backend interpret" in device_missing(cpu, "cuda") and "NVIDIA GPU" in device_missing(cpu, "cuda")
    assert device_missing(npu, "npu") is None and device_missing(cpu, "interpret") is None
    # a container whose /dev lists no nvidiaN but whose driver counts a GPU has one
    driver = {"runner": {"backends": {"cuda": {"available": True, "devices": {"cuda": [], "cuda_driver": 1}}}}}
    assert device_missing(driver, "cuda") is None and backend_from_health(driver) == "cuda"

    class Unreachable:
        def health(self) -> dict:
            raise ConnectionError("refused")

    class Cpu:
        def health(self) -> dict:
            return cpu

    assert runner_lacks_device(Unreachable(), "cuda") is None  # no verdict: the jobs will say what failed
    assert runner_lacks_device(Cpu(), "cuda") == device_missing(cpu, "cuda") and not runner_lacks_device(Cpu(), "interpret")


def test_lens_and_hover_on_a_real_h200_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path))
    result = json.loads(H200_ADD.read_text())
    report = analyze_result(result, str(KB_COPY), KB_COPY.read_text())
    assert report.timing_meaningful and report.launches
    name = report.launches[0].kernel
    launches = [la for la in report.launches if la.kernel == name]
    p = ProfiledKernel(name, 1, result["device"]["name"], "cuda", "local", True, launches, "now")
    title = lens_title(p)
    slowest = max(launches, key=lambda la: la.time_ms or 0)
    assert f"median {slowest.time_ms * 1e3:,.1f} us" in title and "GB/s" in title and "of peak" in title
    assert f"{slowest.bound}-bound" in title and "NVIDIA H200" in title
    md = hover_markdown(p)
    assert f"{slowest.achieved_gbps:,.0f} GB/s" in md and f"{slowest.bandwidth_fraction:.0%}" in md
    assert f"{slowest.waves:.2f}" in md
    meaningless = ProfiledKernel(name, 1, "cpu", "interpret", "local", False, launches, "now")
    assert "timings meaningless" in lens_title(meaningless)


def test_runner_settings_default_is_local() -> None:
    assert parse_runner_settings(None) == (RunnerSettings(), [])
    assert RunnerSettings().runner_config() == {}
