"""Reference outputs kept across a pool's verify jobs: one key for every round of a task, and the store forgets
the least recently used first, within a count and a byte bound."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

WORKER = Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"
sys.path.insert(0, str(WORKER))

import verify_isolated  # noqa: E402

BACKEND = SimpleNamespace(name="cuda", timing_meaningful=True)
SPEC = {"harness": {"mode": "kernelbench", "path": "/t/kb.py", "source": None}, "shapes": [], "seeds": [0, 1],
        "time": True}


def key(**spec: object) -> str:
    return verify_isolated._reference_key(BACKEND, {**SPEC, **spec})  # type: ignore[arg-type]


def test_every_round_of_a_task_shares_its_reference_key() -> None:
    first_round = key(baseline_source="ORIGINAL")
    later_round = key(baseline_source="ROUND 1 TEXT", reference_source="ORIGINAL")
    assert first_round == later_round == key(baseline_source="ROUND 2 TEXT", reference_source="ORIGINAL")
    assert key(baseline_source="OTHER ORIGINAL") != first_round
    assert key(reference_source="ORIGINAL") != first_round  # no baseline: no timing shape among the cases
    assert key(baseline_source="ORIGINAL", seeds=[0]) != first_round
    assert key(baseline_source="ORIGINAL", budget_s=5, kernels=["k"]) == first_round  # the candidate's phase only


def _entry(store: Path, name: str, size: int, mtime: float) -> None:
    (store / name).mkdir()
    (store / name / "expected.sealed").write_bytes(b"x" * size)
    os.utime(store / name, (mtime, mtime))


def test_the_store_forgets_the_least_recently_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_isolated, "MAX_KEPT_REFERENCES", 3)
    for index, name in enumerate("abcd"):
        _entry(tmp_path, name, 10, 1000.0 + index)
    verify_isolated._touch(str(tmp_path / "a"))  # reused just now: the newest
    verify_isolated._forget_oldest(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c", "d"]


def test_the_store_keeps_within_its_bytes_but_always_the_newest(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_isolated, "MAX_KEPT_BYTES", 25)
    _entry(tmp_path, "old", 10, 1000.0)
    _entry(tmp_path, "mid", 10, 1001.0)
    _entry(tmp_path, "new", 10, 1002.0)
    verify_isolated._forget_oldest(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid", "new"]
    _entry(tmp_path, "huge", 100, 1003.0)
    verify_isolated._forget_oldest(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge"]
