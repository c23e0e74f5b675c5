"""Writes that lose nothing (issue 21, item 6): `optimize --apply` and every file the product writes go through
a temporary file beside the target, fsync and rename; the mode is kept, a changed or moved file is refused, and a
failure is a clear message with the old file intact, never a traceback."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tritonlens.server.commands import optimize
from tritonlens.server.durable import replace_file as durable
from tritonlens.server.durable.replace_file import WriteRefused, read_snapshot, replace_file

OLD = "import torch\n\n# the user's kernel file\n" + "x = 1\n" * 3000  # 18 kB
NEW = OLD.replace("x = 1", "x = 22")  # 21 kB


def _result(original: str, final: str) -> SimpleNamespace:
    return SimpleNamespace(
        overall=SimpleNamespace(accepted=True, speedup=1.5), original=original, final=final, timing_meaningful=True
    )


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 64 kB tmpfs (root only: skipped elsewhere; the ENOSPC injection test below covers every machine)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Fill the file system of `folder` until about `leave` bytes are free."""
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with open(folder / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))


def test_apply_on_a_full_disk_keeps_the_old_file_and_says_why(tiny_disk: Path, capsys) -> None:
    target = tiny_disk / "kernel.py"
    target.write_text(OLD)
    _fill(tiny_disk, leave=8 * 1024)  # the old text's blocks freed by a truncation would fit most of the new
    ok = optimize._apply(target, _result(OLD, NEW))  # before the fix: OSError out of write_bytes, file truncated
    assert not ok
    assert target.read_text() == OLD, "the file is neither the old text nor the new one"
    err = capsys.readouterr().err
    assert "no space left" in err and "unchanged" in err and "Traceback" not in err
    assert {p.name for p in tiny_disk.iterdir()} == {"filler", "kernel.py"}, "a temporary file was left behind"


def test_injected_enospc_leaves_the_file_whole(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "report.json"
    target.write_text("old report")
    real_write = os.write

    def write_some_then_fail(fd: int, data: bytes) -> int:
        if len(data) > 4:
            return real_write(fd, bytes(data[:4]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable.os, "write", write_some_then_fail)
    with pytest.raises(WriteRefused, match="no space left on the device; .* is unchanged"):
        replace_file(target, "new report, much longer than four bytes")
    assert target.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_apply_through_a_symlink_writes_its_target_and_says_so(tmp_path: Path, capsys) -> None:
    real = tmp_path / "src" / "kernel.py"
    real.parent.mkdir()
    real.write_text(OLD)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert optimize._apply(link, _result(OLD, NEW))
    assert link.is_symlink() and real.read_text() == NEW
    err = capsys.readouterr().err
    assert f"a symlink: wrote its target {real}" in err  # before the fix: written through silently


def test_a_link_moved_after_the_read_is_refused(tmp_path: Path) -> None:
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("a")
    second.write_text("b")
    link = tmp_path / "k.py"
    link.symlink_to(first)
    snapshot = read_snapshot(link)
    link.unlink()
    link.symlink_to(second)
    with pytest.raises(WriteRefused, match="now leads to"):
        replace_file(link, "new", expected=snapshot)
    assert first.read_text() == "a" and second.read_text() == "b"


def test_a_file_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "k.py"
    target.write_text("read")
    snapshot = read_snapshot(target)
    target.write_text("saved by the editor meanwhile")
    with pytest.raises(WriteRefused, match="changed since it was read"):
        replace_file(target, "ours", expected=snapshot)
    assert target.read_text() == "saved by the editor meanwhile"
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]


def test_the_mode_is_kept_and_a_new_file_follows_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "k.py"
    target.write_text("x")
    target.chmod(0o751)
    replace_file(target, "y")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751 and target.read_text() == "y"
    old = os.umask(0o027)
    try:
        replace_file(tmp_path / "new.txt", "z")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_a_folder_or_device_is_not_replaced(tmp_path: Path) -> None:
    with pytest.raises(WriteRefused, match="not a regular file"):
        replace_file(tmp_path, "x")
