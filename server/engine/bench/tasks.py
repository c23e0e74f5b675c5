"""Which files are bench tasks, and which of them a shard takes."""

from __future__ import annotations

import ast
from pathlib import Path

KERNELBENCH_NAMES = ("Model", "ModelNew", "get_inputs", "get_init_inputs")


def is_task(source: str) -> bool:
    """KernelBench form: the four names defined at module level (a cheap parse, nothing imported)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    return all(name in names for name in KERNELBENCH_NAMES)


def find_tasks(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Task files under the given files/folders, sorted (a stable order for shards); problems as messages."""
    found: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(raw)
        candidates = sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
        if not candidates:
            problems.append(f"{raw}: no such file or folder")
        for file in candidates:
            if file.name.startswith("_") or any(part.startswith(".") for part in file.parts):
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{file}: cannot read: {exc}")
                continue
            if is_task(text):
                found.append(file)
    return sorted(set(found)), problems


def parse_shard(text: str) -> tuple[int, int]:
    """"2/3" -> (2, 3): the second of three shards (1-based)."""
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or not 1 <= int(index) <= int(count):
        raise ValueError(f"--shard takes I/N with 1 <= I <= N, not {text!r}")
    return int(index), int(count)


def shard(tasks: list[Path], index: int, count: int) -> list[Path]:
    return [t for i, t in enumerate(tasks) if i % count == index - 1]
