"""The compile cache: what its key depends on, memory LRU, disk persistence and atomic writes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from kernel_requests import KERNELS, request

from tritonlens.ascend_runner.cache import ResultCache, compile_key, dependency_sources, function_sources_key

SOURCE = (KERNELS / "elementwise.py").read_text()


def key(source: str = SOURCE, **changes: object) -> str:
    req = request("elementwise", source=source, path="/p/k.py")
    for name, value in changes.items():
        setattr(req, name, value)
    return compile_key(req, "triton 3.6.0")


def test_dependency_sources_follow_helpers_and_skip_host_code() -> None:
    deps = dependency_sources(SOURCE, "add_kernel")
    assert deps is not None
    names = {k.split("@")[0] for k in deps}
    assert {"add_kernel", "scale"} <= names
    assert "add" not in names  # host wrapper
    assert not any("__main__" in text for text in deps.values())
    assert dependency_sources("def broken(:\n", "k") is None
    assert dependency_sources(SOURCE, "missing") is None


def test_key_changes_with_what_changes_the_compile() -> None:
    base = key()
    assert key() == base
    assert key(SOURCE.replace("return x * factor", "return x * factor * 1.0")) != base  # helper edit
    assert key(SOURCE.replace("mask = offsets", "mask  = offsets")) != base  # kernel edit
    assert key("# new first line\n" + SOURCE) != base  # every loc shifts by one line
    assert key(target="sm_80") != base
    assert key(options={"num_warps": 8}) != base
    assert key(constants={"BLOCK_SIZE": 512}) != base
    assert key(divisibility=[]) != base
    req = request("elementwise", source=SOURCE, path="/p/k.py")
    assert compile_key(req, "triton 3.7.0") != base


def test_key_ignores_host_code_edits() -> None:
    edited = SOURCE.replace("out = torch.empty_like(x)", "out = torch.zeros_like(x)")
    assert edited != SOURCE
    assert key(edited) == key()


def test_server_supplied_function_sources() -> None:
    req = request("elementwise", source=SOURCE, path="/p/k.py")
    a = compile_key(req, "t", {"add_kernel@13": "def add_kernel(): ...", "scale@8": "def scale(): ..."})
    b = compile_key(req, "t", {"add_kernel@13": "def add_kernel(): ...", "scale@8": "def scale(): x"})
    assert a != b
    assert function_sources_key({"a": "1", "b": "2"}) == function_sources_key({"b": "2", "a": "1"})


def test_memory_lru_and_disk(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, memory_entries=2)
    for i in range(3):
        cache.put(f"{i:064x}", {"n": i})
    assert len(cache._memory) == 2
    assert cache.get(f"{0:064x}") == {"n": 0}  # evicted from memory, read back from disk
    other = ResultCache(tmp_path)  # a second process sees the same entries
    assert other.get(f"{2:064x}") == {"n": 2}
    assert other.get(f"{9:064x}") is None
    stored = json.loads(next(tmp_path.rglob(f"{1:064x}.json")).read_text())
    assert stored["value"] == {"n": 1} and stored["key"] == f"{1:064x}"
    assert not list(tmp_path.rglob("*.tmp"))


def test_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    cache.put("ab" * 32, {"n": 1})
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{not json")
    assert ResultCache(tmp_path).get("ab" * 32) is None


def _writer(root: str, worker: int) -> None:
    cache = ResultCache(root)
    for i in range(200):
        cache.put("cd" * 32, {"writer": worker, "i": i, "pad": "x" * 20000})


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in range(2)]
    for p in procs:
        p.start()
    reader = ResultCache(tmp_path, memory_entries=0)
    seen = 0
    while any(p.is_alive() for p in procs):
        value = reader.get("cd" * 32)
        reader.clear_memory()
        if value is not None:
            assert len(value["pad"]) == 20000
            seen += 1
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert reader.get("cd" * 32) is not None
    assert not list(tmp_path.rglob("*.tmp"))
    if seen == 0:
        pytest.skip("the writers finished before the reader looked")


def test_unwritable_cache_dir_only_loses_the_disk_copy(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = ResultCache(blocker / "sub")
    cache.put("ef" * 32, {"n": 1})
    assert cache.get("ef" * 32) == {"n": 1}


def test_disk_cache_is_bounded_least_recently_used_first(tmp_path) -> None:
    """Issue 14, item 16: the compile cache has a size bound; entries read recently survive a trim."""
    import os
    import time

    from tritonlens.ascend_runner.cache import ResultCache

    cache = ResultCache(tmp_path, max_disk_mb=None)  # filled unbounded, then bounded to ~52 kB
    blob = "x" * 4000
    keys = [f"{i:064x}" for i in range(40)]
    for i, key in enumerate(keys):
        cache.put(key, {"blob": blob})
        os.utime(cache._file(key), (time.time() - 1000 + i, time.time() - 1000 + i))
    cache.clear_memory()
    assert cache.get(keys[0]) is not None  # read now: the most recently used
    cache.max_disk_bytes = int(0.05 * 1024 * 1024)
    assert cache.trim() > 0
    size = sum(f.stat().st_size for f in (tmp_path / "compile").glob("*/*.json"))
    assert size <= 0.05 * 1024 * 1024
    assert cache._file(keys[0]).exists(), "a just-read entry was evicted"
    assert not cache._file(keys[1]).exists(), "the least recently used entry survived"
    assert cache._file(keys[-1]).exists()
