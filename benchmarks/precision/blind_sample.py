"""Blind precision sample (issue 24): run the product on repositories it was never tuned on, then score judgements.

The repository keeps only the manifests (repo, commit, path, platform) and the judgements (one row per finding:
verdict and reason, written before any change to the product); the files themselves stay outside it.

    python benchmarks/precision/blind_sample.py checkout --manifest M --trees /work/blindrepos/trees
    python benchmarks/precision/blind_sample.py level1 --manifest M --trees T --out l1.json
    python benchmarks/precision/blind_sample.py ir --manifest M --trees T --target sm_90 --out-dir D --cap 420
    python benchmarks/precision/blind_sample.py score --platform cuda --judgements J --ir-dir D --out R.json

`checkout` writes each repository's whole snapshot (`fetch` layout: MIRROR/OWNER+NAME/repo) under TREES/OWNER+NAME,
so the product sees the folders, launch sites and tests its users have. `level1` is `tritonlens check --format json`
on the manifest's files inside those trees. `ir` analyzes one file per process exactly as `tritonlens check --level ir
--target T` does (same triage, same merge), capped at `--cap` seconds per file, and records per kernel whether it
compiled, from what (real values only, or with guessed ones) and why not. `score` gives precision per level and per
rule from a judgements CSV, the warning-level false positives, and the levels 3-4 coverage.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_MIRROR = Path(os.environ.get("TRITONLENS_MIRROR", "/work/.mirror"))


def read_manifest(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def tree_path(trees: Path, row: dict[str, str]) -> Path:
    return trees / row["repo"].replace("/", "+") / row["path"]


def checkout(args: argparse.Namespace) -> int:
    """Whole snapshot of each repository at the manifest's commit; top-level entries that cannot be archived (a
    file the snapshot lacks, such as a large image) are left out one by one."""
    problems = 0
    for repo, commit in sorted({(r["repo"], r["commit"]) for r in read_manifest(args.manifest)}):
        gdir = args.mirror / repo.replace("/", "+") / "repo"
        dest = args.trees / repo.replace("/", "+")
        dest.mkdir(parents=True, exist_ok=True)
        top = subprocess.run(
            ["git", "--git-dir", str(gdir), "ls-tree", "--name-only", commit], capture_output=True, text=True
        ).stdout.split()
        for entry in top:
            archive = subprocess.run(
                ["git", "--git-dir", str(gdir), "archive", commit, entry], capture_output=True
            )
            if archive.returncode != 0:
                print(f"{repo}: left out {entry}: {archive.stderr.decode().strip()[:120]}", file=sys.stderr)
                continue
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    for row in read_manifest(args.manifest):
        if not tree_path(args.trees, row).exists():
            print(f"missing: {row['repo']}:{row['path']}", file=sys.stderr)
            problems += 1
    return 1 if problems else 0


def level1(args: argparse.Namespace) -> int:
    files = [str(tree_path(args.trees, r)) for r in read_manifest(args.manifest)]
    exe = Path(sys.executable).with_name("tritonlens")
    proc = subprocess.run([str(exe), "check", "--format", "json", *files], capture_output=True, text=True)
    args.out.write_text(proc.stdout, encoding="utf-8")
    print(f"{len(json.loads(proc.stdout or '[]'))} level-1 findings -> {args.out}")
    return 0


def ir(args: argparse.Namespace) -> int:
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for row in read_manifest(args.manifest):
        path = tree_path(args.trees, row)
        out = args.out_dir / (f"{row['repo']}/{row['path']}".replace("/", "_") + ".json")
        if out.exists():
            continue
        started = time.perf_counter()
        cmd = [sys.executable, __file__, "ir-one", str(path), args.target, str(out)]
        try:
            rc = subprocess.run(cmd, timeout=args.cap, capture_output=True).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        print(f"rc={rc} {time.perf_counter() - started:.0f}s {row['repo']} {row['path']}", flush=True)
    return 0


def ir_one(args: argparse.Namespace) -> int:
    """One file as `check --level ir` sees it, plus per-kernel coverage facts (the product's own classifiers)."""
    sys.path.insert(0, str(HERE))
    from ir_coverage import classify, provenance

    from tritonlens.analysis.compiler.variants import variant_guesses
    from tritonlens.analysis.core.escalation import apply_and_merge
    from tritonlens.analysis.core.settings import Settings
    from tritonlens.analysis.core.targets import platform_of
    from tritonlens.server.commands.check_ir import _dedupe, _triage, make_runner
    from tritonlens.server.engine.diagnose import analyze_document, find_pyproject_overrides
    from tritonlens.server.engine.record.launch_store import project_relative

    path = Path(args.file)
    source = path.read_text(encoding="utf-8")
    settings = Settings.from_mapping({"target": platform_of(args.target), "select": "", "ignore": ""})
    file_settings = settings.for_file(source, project_relative(str(path)))
    runner = make_runner(None)
    kernels: list[dict[str, Any]] = []
    findings = _triage(source, str(path))
    started = time.perf_counter()
    try:
        for a in analyze_document(
            source, str(path), args.target, runner, overrides=find_pyproject_overrides(path)
        ):
            row: dict[str, Any] = {
                "kernel": a.kernel,
                "analyzed": a.primary is not None,
                "error": a.error,
                "variants": [
                    {
                        "label": v.specialization.label,
                        "ok": v.ok,
                        "guesses": variant_guesses(v.specialization),
                        "provenance": dict(v.specialization.provenance),
                        "errors": [e.message[:2000] for e in v.errors],
                    }
                    for v in a.variants
                ],
            }
            if a.primary is not None:
                row["from"], row["label"] = provenance(a), a.primary.specialization.label
            else:
                row["failure"], row["reason"] = classify(a, path.parent)
            kernels.append(row)
            findings.extend(a.findings)
    finally:
        runner.close()
    merged = apply_and_merge(file_settings, _dedupe(findings))
    payload = {
        "path": str(path),
        "seconds": round(time.perf_counter() - started, 1),
        "kernels": kernels,
        "findings": [f.to_dict() for f in merged],
    }
    Path(args.out).write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


def precision(rows: list[dict[str, str]]) -> dict[str, Any]:
    count = collections.Counter(r["verdict"] for r in rows)
    n = len(rows)
    return {
        "judged": n,
        "TP": count["TP"],
        "debatable": count["debatable"],
        "FP": count["FP"],
        "precision_tp": round(count["TP"] / n, 3) if n else None,
    }


def coverage(ir_dir: Path) -> dict[str, Any]:
    kernels: list[dict[str, Any]] = []
    for fn in sorted(ir_dir.glob("*.json")):
        data = json.loads(fn.read_text(encoding="utf-8"))
        for k in data["kernels"]:
            row: dict[str, Any] = {"kernel": k["kernel"], "compiled": k["analyzed"]}
            if k["analyzed"]:
                primary = next(v for v in k["variants"] if v["ok"])
                row |= {"from": k["from"], "variant": k["label"], "guessed": sorted(primary["guesses"])}
            else:
                row |= {"failure": k["failure"], "reason": (k.get("reason") or "")[:300]}
            kernels.append(row | {"file": data["path"].split("/", 2)[-1]})
    compiled = [k for k in kernels if k["compiled"]]
    sources = collections.Counter(
        src
        for k in compiled
        for src in ("launch at line", "autotune config", "defaults", "recorded")
        if src in k["variant"]
    )
    failures = collections.Counter(k["failure"] for k in kernels if not k["compiled"])
    return {
        "kernels": len(kernels),
        "compiled": len(compiled),
        "compiled_share": round(len(compiled) / len(kernels), 3) if kernels else 0.0,
        "compiled_on_real_values_only": sum(1 for k in compiled if k["from"] in ("visible", "recorded")),
        "compiled_with_some_guessed_value": sum(1 for k in compiled if k["from"] == "assumed"),
        "variant_sources": dict(sources),
        "not_compiled": dict(failures),
        "tool_caused_guess_failures": failures.get("tool-guess", 0),
        "rows": kernels,
    }


def score(args: argparse.Namespace) -> int:
    with args.judgements.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    family = "TL3" if args.platform == "cuda" else "TL4"
    level1_rows = [r for r in rows if r["level"] == "1"]
    ir_rows = [r for r in rows if r["level"] != "1"]
    per_rule = {}
    for code in sorted({r["code"] for r in rows}):
        of_rule = [r for r in rows if r["code"] == code]
        per_rule[code] = precision(of_rule) | {
            "severities": dict(collections.Counter(r["severity"] for r in of_rule)),
            "resting_on_a_guess": sum(1 for r in of_rule if r["guessed"] != "no"),
        }
    warning_fps = [
        {k: r[k] for k in ("code", "path", "line", "severity", "reason")}
        for r in rows
        if r["verdict"] == "FP" and r["severity"] in ("warning", "error")
    ]
    result = {
        "platform": args.platform,
        "files": len({(r["repo"], r["path"]) for r in read_manifest(args.manifest)}),
        "repos": sorted({r["repo"] for r in read_manifest(args.manifest)}),
        "level1": precision(level1_rows),
        f"{family}xx": precision([r for r in ir_rows if r["code"].startswith(family)]),
        f"{family}xx_on_a_guess": precision(
            [r for r in ir_rows if r["code"].startswith(family) and r["guessed"] != "no"]
        ),
        f"{family}xx_on_real_values": precision(
            [r for r in ir_rows if r["code"].startswith(family) and r["guessed"] == "no"]
        ),
        "warning_or_error_fp": {
            "count": len(warning_fps),
            "by_rule": dict(collections.Counter(w["code"] for w in warning_fps)),
            "items": warning_fps,
        },
        "per_rule": per_rule,
        "rules_below_70pct": sorted(c for c, p in per_rule.items() if (p["precision_tp"] or 0.0) < 0.7),
        "ir_coverage": coverage(args.ir_dir),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: v for k, v in result.items() if k not in ("per_rule", "ir_coverage", "warning_or_error_fp")}
        )
    )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("checkout")
    c.add_argument("--manifest", type=Path, required=True)
    c.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    c.add_argument("--trees", type=Path, required=True)
    c.set_defaults(run=checkout)
    c = sub.add_parser("level1")
    c.add_argument("--manifest", type=Path, required=True)
    c.add_argument("--trees", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.set_defaults(run=level1)
    c = sub.add_parser("ir")
    c.add_argument("--manifest", type=Path, required=True)
    c.add_argument("--trees", type=Path, required=True)
    c.add_argument("--target", required=True)
    c.add_argument("--out-dir", type=Path, required=True)
    c.add_argument("--cap", type=float, default=420.0, help="seconds per file")
    c.set_defaults(run=ir)
    c = sub.add_parser("ir-one")
    c.add_argument("file")
    c.add_argument("target")
    c.add_argument("out")
    c.set_defaults(run=ir_one)
    c = sub.add_parser("score")
    c.add_argument("--platform", choices=("cuda", "ascend"), required=True)
    c.add_argument("--manifest", type=Path, required=True)
    c.add_argument("--judgements", type=Path, required=True)
    c.add_argument("--ir-dir", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.set_defaults(run=score)
    args = p.parse_args()
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
