"""Issue 14 item 16, the parts without a test elsewhere: `--runner local:ENV` is obeyed, `check --level ir`
needs no `--target`, and the README's first command stops on a failed bootstrap and labels its outputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tritonlens.ascend_runner import client
from tritonlens.server.cli import main
from tritonlens.server.commands.profile import make_runner

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("python", ["/opt/envs/x/bin/python", "/usr/bin/python3"])
def test_runner_local_env_runs_every_backend_there(monkeypatch: pytest.MonkeyPatch, python: str):
    seen: list[dict[str, Any]] = []

    class Recording:
        def __init__(self, config: dict[str, Any]) -> None:
            seen.append(config)

        def close(self) -> None:
            pass

    monkeypatch.setattr(client, "LocalRunner", Recording)
    make_runner(f"local:{python}")
    assert seen[0]["cuda"] == {"python": python} and seen[0]["ascend"] == {"python": python}
    with pytest.raises(RuntimeError, match="needs an environment name"):
        make_runner("local:")


def test_check_level_ir_needs_no_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "plain.py"
    path.write_text("x = 1\n")
    assert main(["check", "--level", "ir", str(path)]) == 0
    out = capsys.readouterr()
    assert "both" not in out.err and "Traceback" not in out.err


def test_readme_first_command_stops_on_a_failed_bootstrap_and_labels_its_outputs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = next(line for line in readme.splitlines() if "scripts/bootstrap" in line)
    assert re.match(r"^scripts/bootstrap &&", first), first  # `;` would run the checks after a failed bootstrap
    labels = re.findall(r'echo "== ([^"]+)"', first)
    checks = re.findall(r"tritonlens check", first)
    assert len(labels) == len(checks) == 2, first
