"""The attrs code cache of `tritonlens serve` (server/lsp/attrs_code_cache.py): attrs classes made with cached code
behave as freshly compiled ones, and nothing it reads can break the start or be evaluated if it is not code."""

from __future__ import annotations

import marshal
from pathlib import Path

import attr
import attr._make as attrs_make
import pytest

from tritonlens.server.lsp import attrs_code_cache


def _define(tag: str) -> type:
    @attr.define
    class Point:
        x: int
        y: int = 0
        label: str = tag

    return Point


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TRITONLENS_NO_CODE_CACHE", raising=False)
    made: list[attrs_code_cache.CodeCache] = []

    def install() -> attrs_code_cache.CodeCache:
        cache = attrs_code_cache.install(tmp_path)
        assert cache is not None
        made.append(cache)
        return cache

    yield install
    for cache in reversed(made):
        attrs_code_cache.uninstall(cache)


def test_a_second_start_evaluates_the_kept_code_and_the_classes_behave_the_same(installed) -> None:
    first = installed()
    fresh = _define("a")
    assert first.misses and first.hits == 0
    first.save()
    attrs_code_cache.uninstall(first)

    second = installed()
    cached = _define("a")
    assert second.hits == len(first.misses) and not second.misses
    for cls in (fresh, cached):
        p = cls(1, y=2)
        assert (p.x, p.y, p.label) == (1, 2, "a")
        assert p == cls(1, 2) and p != cls(2, 2)
        assert repr(p) == "Point(x=1, y=2, label='a')"
        with pytest.raises(TypeError):
            cls()  # x is required: the generated __init__ is the real one


def test_a_corrupt_file_is_compiled_afresh_and_rewritten(installed, tmp_path: Path) -> None:
    path = attrs_code_cache.cache_file(tmp_path)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not marshal data at all")
    cache = installed()
    assert _define("b")(3).x == 3
    assert cache.misses
    cache.save()
    assert isinstance(marshal.loads(path.read_bytes()), dict)


def test_a_value_that_is_not_code_is_never_evaluated(installed, tmp_path: Path) -> None:
    first = installed()
    _define("c")
    keys = list(first.misses)
    attrs_code_cache.uninstall(first)
    path = attrs_code_cache.cache_file(tmp_path)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(marshal.dumps({key: "raise SystemExit('evaluated')" for key in keys}))
    second = installed()
    assert _define("c")(5).x == 5  # compiled, not the strings
    assert second.hits == 0 and len(second.misses) == len(keys)


def test_turned_off_or_another_attrs_leaves_attrs_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITONLENS_NO_CODE_CACHE", "1")
    assert attrs_code_cache.install(tmp_path) is None
    monkeypatch.delenv("TRITONLENS_NO_CODE_CACHE")
    monkeypatch.setattr(attrs_make, attrs_code_cache.HOOK, lambda source, env: None)  # another signature
    assert attrs_code_cache.install(tmp_path) is None
    assert not (tmp_path / "lsp-code").exists()


def test_serve_keeps_the_code_of_its_start(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "TRITONLENS_CACHE_DIR": str(tmp_path)}
    env.pop("TRITONLENS_NO_CODE_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "serve"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=120,
    )  # stdin at its end: the server starts, reads nothing and stops
    assert done.returncode == 0, done.stderr
    kept = list((tmp_path / "lsp-code").glob("attrs-*.marshal"))
    assert len(kept) == 1
    assert len(marshal.loads(kept[0].read_bytes())) > 100  # lsprotocol's classes
