"""Levels 3-4 coverage on real public kernels: how many get compiled and analyzed with no pragma, from what
(recorded launches, launch sites/configs/defaults, or labeled assumptions), and why the others do not.

    python benchmarks/precision/corpus.py                     # once: the manifest's files (needs the snapshots)
    python benchmarks/precision/ir_coverage.py [--per-group 8] [--all] [--out benchmarks/results/ir_coverage.json]

Each file is analyzed inside a checkout of its repository's source tree at the manifest's commit (written under
the corpus cache, `trees/OWNER+NAME/`, never into this repository), so it imports its package as it does for its
users. The compile target follows the file's platform as `auto` decides it (sm_90 for CUDA, ascend910b3 for
Ascend); the decision is compared with the manifest's judgement. Kernels are sampled deterministically: up to
`--per-group` per (repository, platform), spread over files (`--all`: every kernel; `--platform ascend`: only
the groups of files written for that platform).

Every kernel that does not compile is classified: `needs-absent` when the file needs something this machine does
not have (a device at import, a module that is neither in the repository nor installed and whose names the kernel
uses, a Triton API this version lacks), `kernel-code` when the kernel's own code calls a Python builtin Triton
does not support (`str(value)` in a debug kernel), `tool-guess` when the compile of a labeled guess failed (recording real
launches fixes it), `tool` otherwise (a failure of tritonlens itself: its import of the file, the runner).
Prints the table and saves every row (kernel, provenance, failure class and message) as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from corpus import DEFAULT_CACHE, DEFAULT_MIRROR, MANIFEST, Entry, git_dir, read_manifest  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "ir_coverage.json"
_BUILTIN = re.compile(r"NameError\('(?:str|repr|format|list|dict|set|tuple) is not defined")
_ALONE_NOTE = re.compile(r" \[analyzed from the file's source alone: .*?\)\](?= \[compiled with|$)", re.S)
_UNDEFINED = re.compile(r"NameError|is not defined|no @triton.jit function named")
# `tl.float32(x)`: no Triton here calls dtypes (a kernel of our own with no guessed value fails the same way)
_OLD_API = re.compile(
    r"unexpected keyword argument 'trans_[ab]'|Cannot access global variable|'dtype' object is not callable"
)
_DEVICE = re.compile(r"[Nn]o device were detected|no (NVIDIA|CUDA|NPU) (GPU|device)|Found no NVIDIA driver")
_TRITON_SUBMODULE = re.compile(r"No module named '(triton\.[\w.]+)'")
_MISSING_MODULE = re.compile(r"No module named '([A-Za-z0-9_.]+)'")
_NO_ATTR = re.compile(
    r"module '(triton[\w.]*)' has no attribute '(\w+)'|cannot import name '(\w+)' from '(triton[\w.]*)'"
)


def tree_roots(path: str) -> str:
    """The folder of the repository to check out for a file: its package's source root."""
    parts = path.split("/")
    if parts[0] in ("src", "python") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else path


def checkout(entry: Entry, mirror: Path, cache: Path) -> Path | None:
    """The file inside a checkout of the folders it needs (plus the repository's root project files)."""
    base = cache / "trees" / entry.repo.replace("/", "+")
    target = base / entry.path
    if target.exists():
        return target
    gdir = git_dir(mirror, entry.repo)
    if gdir is None:
        return None
    listing = subprocess.run(
        ["git", "-C", str(gdir), "ls-tree", "--name-only", entry.commit],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    wanted = [tree_roots(entry.path)] + [f for f in ("pyproject.toml", "setup.py") if f in listing]
    base.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(gdir), "archive", entry.commit, *wanted], capture_output=True, check=False
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=False)
    return target if target.exists() else None


def sample(entries: list[Entry], cache: Path, per_group: int | None) -> list[tuple[Entry, str]]:
    from tritonlens.server.engine.diagnose import launchable_kernels

    groups: dict[tuple[str, str], list[list[tuple[Entry, str]]]] = defaultdict(list)
    for entry in entries:
        source = (cache / entry.local).read_text(encoding="utf-8")
        kernels = [(entry, k) for k in launchable_kernels(source)]
        if kernels:
            groups[(entry.repo, entry.platform)].append(kernels)
    picked: list[tuple[Entry, str]] = []
    for key in sorted(groups):
        files = groups[key]
        chosen: list[tuple[Entry, str]] = []
        depth = 0
        while (per_group is None or len(chosen) < per_group) and any(depth < len(f) for f in files):
            for f in files:  # one kernel per file per round: spread over files
                if depth < len(f) and (per_group is None or len(chosen) < per_group):
                    chosen.append(f[depth])
            depth += 1
        picked.extend(chosen)
    return picked


def classify(analysis: Any, tree: Path) -> tuple[str, str]:
    """(class, reason) for a kernel that did not compile, most specific cause first:
    needs-absent (a device at import, an API this Triton lacks, a name that comes from a module absent here),
    kernel-code (the kernel's own code calls a Python builtin, such as str(), that Triton does not support),
    tool-guess (the compile of a labeled guess failed: recording real launches fixes it), tool (anything else)."""
    compile_errors = [f.message for f in analysis.findings if f.code in ("TL300", "TL400", "TL005")]
    compile_errors += [e.message for v in analysis.variants for e in v.errors]
    # past the guesses: what the last retry of a labeled guess hit (an API this Triton lacks is not a tool failure)
    retried = [m for v in analysis.variants for m in (v.metadata or {}).get("retried_errors") or []]
    compile_errors += retried
    warnings = [w for v in analysis.variants for w in (v.metadata or {}).get("module_warnings") or []]
    alone = any((v.metadata or {}).get("source_alone") for v in analysis.variants)
    if alone and not _UNDEFINED.search("\n".join(compile_errors)):
        warnings = []  # built from the file's source alone: the failed imports are not why the compile failed
        compile_errors = [_ALONE_NOTE.sub("", m) for m in compile_errors]  # nor is the note that says so
    notes = [str(w.get("message", "")) for w in warnings]
    blob = "\n".join(compile_errors + notes + [analysis.error or ""])
    first = (compile_errors or notes or ["no message"])[0].splitlines()[0][:300]
    if retried:
        first = f"{first[:200]} (then, with the next guess: {retried[0][:150]})"
    if _DEVICE.search(blob):
        return "needs-absent", "the package needs a device (or its driver) at import: " + first
    newer = _TRITON_SUBMODULE.search(blob)
    if newer:
        return "needs-absent", f"this Triton has no {newer.group(1)}: {first}"
    attr = _NO_ATTR.search(blob) or _OLD_API.search(blob)
    if attr:
        return "needs-absent", f"an API this Triton lacks: {first}"
    missing = [m for m in _MISSING_MODULE.findall(blob) if not (tree / m.split(".")[0]).exists()]
    missing += [str(w["stand_in"]) for w in warnings if w.get("stand_in")]
    undefined = _UNDEFINED.search("\n".join(compile_errors + [analysis.error or ""]))
    if missing and (undefined or not compile_errors or "no @triton.jit function" in blob):
        return "needs-absent", f"needs {', '.join(sorted(set(missing)))} (absent here): {first}"
    if _BUILTIN.search(blob):
        return "kernel-code", f"the kernel calls a Python builtin Triton's front end does not support: {first}"
    if "compiled with assumed" in blob:
        return "tool-guess", first
    return "tool", first


def provenance(analysis: Any) -> str:
    from tritonlens.analysis.compiler.variants import variant_guesses

    spec = analysis.primary.specialization
    if spec.label.startswith("recorded"):
        return "recorded"
    return "assumed" if variant_guesses(spec) else "visible"


def run(args: argparse.Namespace) -> int:
    from tritonlens.analysis.core.platform import decide
    from tritonlens.analysis.core.targets import compile_target_for
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.server.engine.diagnose import analyze_kernel

    entries = read_manifest(args.manifest)
    if args.platform:  # the groups of one platform (each group's sample is the same as in a full run)
        entries = [e for e in entries if e.platform == args.platform]
    picked = sample(entries, args.cache, None if args.all else args.per_group)
    if args.only:  # a re-check of some rows of the same sample (never for the published summary)
        picked = [(e, k) for e, k in picked if any(o in f"{e.repo}:{e.path}:{k}" for o in args.only)]
    cache = tempfile.mkdtemp(
        prefix="tritonlens-coverage-cache-"
    )  # measure compiles, not an older run's cache
    runner = LocalRunner({"workers": 1, "timeout_s": args.timeout, "cache_dir": cache})
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for entry, kernel in picked:
            path = checkout(entry, args.mirror, args.cache) or (args.cache / entry.local)
            source = path.read_text(encoding="utf-8")
            decision = decide(source, entry.path)
            target = compile_target_for(decision.platforms)
            t0 = time.perf_counter()
            analysis = analyze_kernel(
                source, str(path), kernel, target, runner, max_variants=1, timeout_s=args.timeout
            )
            row: dict[str, Any] = {
                "repo": entry.repo,
                "path": entry.path,
                "kernel": kernel,
                "platform": entry.platform,
                "auto_platforms": list(decision.platforms),
                "target": target,
                "seconds": round(time.perf_counter() - t0, 2),
                "analyzed": analysis.primary is not None,
                "findings": [f.code for f in analysis.findings],
            }
            if analysis.primary is not None:
                row["from"] = provenance(analysis)
                row["variant"] = analysis.primary.specialization.label
                if analysis.primary.metadata.get("source_alone"):
                    row["source_alone"] = True
            else:
                row["failure"], row["reason"] = classify(analysis, path.parent)
            rows.append(row)
            if args.verbose:
                for v in analysis.variants:
                    for e in v.errors:
                        print("   error:", e.message[:400])
                    for w in (v.metadata or {}).get("module_warnings") or []:
                        print("   warning:", w.get("line"), str(w.get("message"))[:300])
                for f in analysis.findings:
                    print("   finding:", f.code, f.span.line, f.message[:300])
            status = row.get("from") or f"{row['failure']}: {row['reason'][:120]}"
            print(
                f"{len(rows):3}/{len(picked)} {entry.repo}:{entry.path}:{kernel} [{target}] {status}",
                flush=True,
            )
    finally:
        runner.close()
    summary = summarise(rows)
    summary["wall_s"] = round(time.perf_counter() - started, 1)
    summary["platform_share"] = platform_share(entries, args.mirror, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print_summary(summary)
    print(f"-> {args.out}")
    return 0


def platform_share(entries: list[Entry], mirror: Path, cache: Path) -> dict[str, dict[str, int]]:
    """Level-1 findings of `tritonlens check` (default target: auto) on every manifest file inside its checkout,
    and how many on files written for one platform come from rules of the other platform only."""
    paths = {str(checkout(e, mirror, cache) or cache / e.local): e for e in entries}
    exe = Path(sys.executable).with_name("tritonlens")
    proc = subprocess.run(
        [str(exe), "check", "--format", "json", *paths], capture_output=True, text=True, check=False
    )
    out: dict[str, dict[str, int]] = {}
    for platform in ("cuda", "ascend"):
        out[platform] = {
            "files": sum(1 for e in entries if e.platform == platform),
            "findings": 0,
            "other_platform_only": 0,
        }
    for finding in json.loads(proc.stdout or "[]"):
        row = out[paths[finding["path"]].platform]
        row["findings"] += 1
        rule = finding.get("platforms") or []
        row["other_platform_only"] += int(bool(rule) and paths[finding["path"]].platform not in rule)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    analyzed = [r for r in rows if r["analyzed"]]
    failures = Counter(r["failure"] for r in rows if not r["analyzed"])
    per_group: dict[str, dict[str, int]] = {}
    for r in rows:
        g = per_group.setdefault(f"{r['repo']} ({r['platform']})", {"kernels": 0, "analyzed": 0})
        g["kernels"] += 1
        g["analyzed"] += int(r["analyzed"])
    return {
        "kernels": len(rows),
        "files": len({(r["repo"], r["path"]) for r in rows}),
        "analyzed": len(analyzed),
        "analyzed_share": round(len(analyzed) / len(rows), 3) if rows else 0.0,
        "from": dict(Counter(r["from"] for r in analyzed)),
        "source_alone": sum(1 for r in analyzed if r.get("source_alone")),
        "failures": dict(failures),
        "platform_agreement": sum(1 for r in rows if r["auto_platforms"] == [r["platform"]]),
        "per_group": per_group,
    }


def print_summary(s: dict[str, Any]) -> None:
    print(
        f"\n{s['analyzed']}/{s['kernels']} kernels ({s['analyzed_share']:.0%}) from {s['files']} files analyzed at levels 3-4"
    )
    print(f"  from: {s['from']}; not compiled: {s['failures']}")
    print(f"  auto platform agrees with the manifest on {s['platform_agreement']}/{s['kernels']} kernels")
    for group, g in s["per_group"].items():
        print(f"  {group:45} {g['analyzed']}/{g['kernels']}")
    for platform, row in s.get("platform_share", {}).items():
        share = row["other_platform_only"] / row["findings"] if row["findings"] else 0.0
        print(
            f"  level 1, target auto: {row['findings']} findings on {row['files']} {platform} files, "
            f"{row['other_platform_only']} ({share:.1%}) from rules of the other platform only"
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    p.add_argument("--manifest", type=Path, default=MANIFEST, help="held-out: heldout_manifest.csv")
    p.add_argument("--per-group", type=int, default=8)
    p.add_argument("--all", action="store_true")
    p.add_argument("--platform", choices=("cuda", "ascend"), help="only the groups of files for this platform")
    p.add_argument("--timeout", type=float, default=180.0)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument(
        "--only", action="append", help="only sampled kernels whose repo:path:kernel contains this"
    )
    p.add_argument("--verbose", action="store_true", help="print each row's errors and module warnings")
    return run(p.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
