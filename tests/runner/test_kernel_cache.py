"""Triton's compiled kernels kept across a pool's verify jobs: our candidates reuse and add to them, an LLM's
candidate neither sees nor adds to them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"
sys.path.insert(0, str(WORKER))

import kernel_cache  # noqa: E402

from tritonlens.ascend_runner.pool import KERNEL_CACHE_ENV, PoolConfig, WorkerPool  # noqa: E402


def _entry(folder: Path, key: str, files: dict[str, str]) -> None:
    (folder / key).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / key / name).write_text(text)


def test_a_candidate_starts_from_the_kept_kernels_and_adds_its_own(tmp_path: Path) -> None:
    kept, cache = tmp_path / "kept", tmp_path / "candidate" / "triton-cache"
    _entry(kept, "AAA", {"driver.so": "d", "__grp__driver.json": "{}"})
    assert kernel_cache.seed(str(kept), str(cache)) == 2
    linked = cache / "AAA" / "driver.so"
    assert linked.read_text() == "d" and os.stat(linked).st_ino == os.stat(kept / "AAA" / "driver.so").st_ino
    # the candidate's process compiles a new kernel (and a temporary it never renamed)
    _entry(cache, "BBB", {"k.cubin": "c", "__grp__k.json": "{}", "k.json.tmp.pid_1": "half"})
    assert kernel_cache.keep(str(cache), str(kept)) == 2
    assert sorted(os.listdir(kept / "BBB")) == ["__grp__k.json", "k.cubin"]
    assert kernel_cache.keep(str(cache), str(kept)) == 0  # already kept: nothing copied twice


def test_only_our_candidates_get_the_kept_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kernel_cache.KERNEL_CACHE_ENV, str(tmp_path))
    assert kernel_cache.kept_folder(untrusted=False) == str(tmp_path)
    assert kernel_cache.kept_folder(untrusted=True) is None  # an LLM's process could plant a kernel under any key
    monkeypatch.delenv(kernel_cache.KERNEL_CACHE_ENV)
    assert kernel_cache.kept_folder(untrusted=False) is None


def test_nothing_is_kept_past_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept, cache = tmp_path / "kept", tmp_path / "cache"
    _entry(kept, "AAA", {"big": "x" * 100})
    _entry(cache, "BBB", {"k.cubin": "c"})
    monkeypatch.setattr(kernel_cache, "MAX_KEPT_BYTES", 50)
    assert kernel_cache.keep(str(cache), str(kept)) == 0 and not (kept / "BBB").exists()


def test_the_pool_names_its_kernel_folder_and_removes_it(tmp_path: Path) -> None:
    pool = WorkerPool(PoolConfig(python=sys.executable))
    folder = pool.config.env[KERNEL_CACHE_ENV]
    assert kernel_cache.KERNEL_CACHE_ENV == KERNEL_CACHE_ENV and os.path.isdir(folder)
    pool.close()
    assert not os.path.exists(folder)
