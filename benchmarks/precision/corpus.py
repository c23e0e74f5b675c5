"""Materialise the public precision corpus (benchmarks/precision/manifest.csv) into a cache outside the repository.

The repository keeps only the manifest (repo, commit, path, platform): never the files themselves. This script
reads each file from a local git snapshot of its repository and writes it under the cache folder as
`CACHE/OWNER+NAME/PATH`. It needs the snapshots: for each repository of the manifest, either a bare git directory
`MIRROR/OWNER+NAME/repo` (the layout the project's `fetch` tool writes under /work/.mirror) or a clone
`MIRROR/OWNER+NAME` (`git clone https://github.com/OWNER/NAME MIRROR/OWNER+NAME`) that contains the manifest's
commit.

    python benchmarks/precision/corpus.py [--mirror /work/.mirror] [--cache ~/.cache/tritonlens/precision-corpus]

Prints how many files it wrote and names every repository or file it could not find (exit 1 if any is missing).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.csv"
DEFAULT_MIRROR = Path(os.environ.get("TRITONLENS_MIRROR", "/work/.mirror"))
DEFAULT_CACHE = Path(
    os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens" / "precision-corpus")
)


@dataclass(frozen=True)
class Entry:
    repo: str  # owner/name
    commit: str
    path: str  # inside the repository
    platform: str  # "cuda" | "ascend": what the file is written for

    @property
    def local(self) -> str:
        """Where the file lies inside the cache folder."""
        return f"{self.repo.replace('/', '+')}/{self.path}"


def read_manifest(path: Path = MANIFEST) -> list[Entry]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [Entry(r["repo"], r["commit"], r["path"], r["platform"]) for r in csv.DictReader(fh)]


def git_dir(mirror: Path, repo: str) -> Path | None:
    """The snapshot of `repo` under `mirror`: a bare `OWNER+NAME/repo` or a clone `OWNER+NAME`."""
    base = mirror / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def materialise(entries: list[Entry], mirror: Path, cache: Path) -> tuple[int, list[str]]:
    """Write every entry under `cache`; returns (files written, problems)."""
    written, problems = 0, []
    for entry in entries:
        target = cache / entry.local
        if target.exists():
            written += 1
            continue
        gdir = git_dir(mirror, entry.repo)
        if gdir is None:
            problems.append(f"no snapshot of {entry.repo} under {mirror}")
            continue
        proc = subprocess.run(
            ["git", "-C", str(gdir), "show", f"{entry.commit}:{entry.path}"], capture_output=True, check=False
        )
        if proc.returncode != 0:
            problems.append(f"{entry.repo}@{entry.commit[:10]}:{entry.path}: {proc.stderr.decode().strip()}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(proc.stdout)
        written += 1
    return written, sorted(set(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirror", type=Path, default=DEFAULT_MIRROR, help="folder holding the git snapshots"
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where to write the files")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args(argv)
    entries = read_manifest(args.manifest)
    written, problems = materialise(entries, args.mirror, args.cache)
    for problem in problems:
        print(f"missing: {problem}", file=sys.stderr)
    print(f"{written}/{len(entries)} corpus files under {args.cache}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
