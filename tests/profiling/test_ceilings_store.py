"""Issue 14, item 16: measured ceilings are merged under a lock and written by atomic rename, so profiles that
finish together keep every device's entry and no reader sees half a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WRITER = """
import sys
from tritonlens.server.engine.profile.jobs import save_measured
for i in range(15):
    save_measured(f"{sys.argv[1]}-{i}", {"copy_gbps": float(i)})
"""


def test_concurrent_profiles_keep_every_device(tmp_path: Path) -> None:
    env = {**os.environ, "TRITONLENS_CACHE_DIR": str(tmp_path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, f"dev{n}"], env=env, stderr=subprocess.PIPE, text=True)
        for n in range(6)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "could not cache" not in err, err
    table = json.loads((tmp_path / "ceilings.json").read_text())["devices"]
    assert len(table) == 6 * 15, f"lost {6 * 15 - len(table)} entries to unlocked read-modify-write"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ceilings")], "a temporary file was left"
