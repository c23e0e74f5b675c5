"""A job forgets the user's own modules it imported (they may change before the next job), never the
interpreter's installed packages, even when the environment sits inside the folder of the file the job runs
(a project's `.venv`): forgetting torch's submodules made the next job re-run their C extensions' init and fail
with garbage errors ("SystemError: ... bad call flags")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"


def test_packages_of_an_environment_inside_the_project_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(WORKER))
    import harness_load

    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "tl_installed_pkg.py").write_text("VALUE = 1\n")
    (tmp_path / "tl_user_helper.py").write_text("VALUE = 2\n")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with harness_load.job_imports(str(tmp_path / "task.py"), None):
            import tl_installed_pkg  # noqa: F401
            import tl_user_helper  # noqa: F401
        assert "tl_user_helper" not in sys.modules  # the user's: read again by the next job
        assert "tl_installed_pkg" in sys.modules  # the environment's: kept
    finally:
        sys.modules.pop("tl_installed_pkg", None)
        sys.modules.pop("tl_user_helper", None)
