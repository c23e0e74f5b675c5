"""Every module the docs name exists (issue 8 item 6): a `folder/module.py` path in docs/*.md is a file of the repository (relative to its root), and a dotted name of the distribution (`server.lsp.serve`,
`analysis.escalation.merge`) imports and resolves, so a doc cannot keep naming a module that moved."""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
# a path with at least one folder, ending in .py, not part of a longer token (URLs, globs `compiler_cuda*.py`)
PATH = re.compile(r"(?<![\w./*-])((?:[\w.-]+/)+[\w.-]+\.py)(?![\w*])")
# `server.x.y`, `analysis.x`, `ascend_runner.x` (optionally `tritonlens.`-prefixed) inside backticks
DOTTED = re.compile(r"`(?:tritonlens\.)?((?:server|analysis|ascend_runner)(?:\.\w+)+)")
URL = re.compile(r"https?://\S+")


def mentions(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        text = URL.sub("", doc.read_text(encoding="utf-8"))
        found += [(doc.name, m) for m in sorted(set(pattern.findall(text)))]
    return found


def resolves(dotted: str) -> bool:
    """The longest importable prefix of `tritonlens.<dotted>`, then attributes for the rest."""
    parts = f"tritonlens.{dotted}".split(".")
    for cut in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_docs_name_module_paths_at_all() -> None:
    assert len(mentions(PATH)) > 50 and len(mentions(DOTTED)) > 10  # the patterns still match the docs' style


@pytest.mark.parametrize("doc,path", mentions(PATH))
def test_named_path_exists(doc: str, path: str) -> None:
    assert (ROOT / path).exists(), f"docs/{doc} names {path}, which is not in the repository"


@pytest.mark.parametrize("doc,name", mentions(DOTTED))
def test_named_module_resolves(doc: str, name: str) -> None:
    assert resolves(name), f"docs/{doc} names {name}, which does not import or has no such attribute"


def test_module_map_names_every_folder() -> None:
    """docs/architecture.md's module map says what each folder holds: every top-level folder of the repository and
    every folder of the distribution is named there as `folder/`."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    skip = {"__pycache__", "build", "dist", "node_modules"}
    top = [
        p
        for p in ROOT.iterdir()
        if p.is_dir() and not p.name.startswith(".") and not p.name.endswith(".egg-info")
    ]
    inner = [p for d in ("analysis", "server", "ascend_runner") for p in (ROOT / d).rglob("*") if p.is_dir()]
    folders = [
        p
        for p in top + inner
        if p.name not in skip and not set(p.relative_to(ROOT).parts) & skip and not _ignored_by_git(p)
    ]
    missing = sorted(
        p.relative_to(ROOT).as_posix() for p in folders if f"{p.relative_to(ROOT).as_posix()}/" not in doc
    )
    assert not missing, f"docs/architecture.md does not say what these folders hold: {missing}"


def _ignored_by_git(path: Path) -> bool:
    """Build and test outputs (`test-artifacts/` after the VS Code e2e) are not part of the module map."""
    proc = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, capture_output=True, check=False)
    return proc.returncode == 0


def _module_map() -> str:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return doc.split("## Module map", 1)[1].split("\n## ", 1)[0]


def _tree_modules() -> list[str]:
    """Every module of `analysis/` and `server/` (what the refactor arranged by level and role)."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for d in ("analysis", "server")
        for p in (ROOT / d).rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts and not _ignored_by_git(p.parent)
    )


def test_module_map_names_every_module_of_analysis_and_server() -> None:
    """The reverse direction: every module of the tree is in docs/architecture.md's module map, by its path (a
    module added without saying what it holds fails here), and every path the map names is a file."""
    named = set(PATH.findall(URL.sub("", _module_map())))
    missing = [m for m in _tree_modules() if m not in named]
    assert not missing, f"docs/architecture.md's module map does not name these modules: {missing}"
    assert len(_tree_modules()) > 200  # the walk still finds the tree


def test_module_map_names_every_package_with_what_it_holds() -> None:
    """Every package of `analysis/` and `server/` has its own line in the map: `- \\`folder/\\`: what it holds`."""
    lines = _module_map().splitlines()
    packages = sorted(
        p.parent.relative_to(ROOT).as_posix() for d in ("analysis", "server") for p in (ROOT / d).rglob("__init__.py")
    )
    undescribed = [
        pkg for pkg in packages if not any(re.match(rf"\s*- `{re.escape(pkg)}/`: \S", line) for line in lines)
    ]
    assert not undescribed, f"docs/architecture.md's module map has no line for these packages: {undescribed}"


def test_top_levels_hold_packages_and_few_shared_modules() -> None:
    """The levels are visible in the tree: no flat family of prefixed modules at the top of `analysis/` or `server/`
    (issue 20), at most a handful of shared modules there."""
    for folder in ("analysis", "server"):
        flat = sorted(p.stem for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py")
        assert len(flat) <= 3, f"{folder}/ holds {flat}"
        prefixes = [s.split("_")[0] for s in flat]
        assert len(set(prefixes)) == len(prefixes), f"{folder}/ has a prefix family: {flat}"
