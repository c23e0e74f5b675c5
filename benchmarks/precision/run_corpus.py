"""Run level-1 triage over the public precision corpus, sample findings for judging, and score the judgements.

    python benchmarks/precision/corpus.py                  # once: materialise the corpus (needs the snapshots)
    python benchmarks/precision/run_corpus.py run          # `tritonlens check --format json` over the corpus
    python benchmarks/precision/run_corpus.py sample -n 90 # a sample stratified by rule, with the code to read
    python benchmarks/precision/run_corpus.py score        # per-rule precision of judgements.csv (markdown)

`run` uses the CLI exactly as a user would, with its default target (the platform default) unless `--target` is
given, and writes benchmarks/results/precision_findings.json: every finding (corpus file, line, code, message,
platforms of the rule) plus counts per rule and per platform, including how many findings on files written for
one platform come from rules of the other only. Only positions and messages are stored, never the code.

`sample` draws up to `-n` findings, the same number per rule where possible (rules with fewer findings give all
of theirs), preferring distinct files, with a fixed seed; it prints each with the surrounding code so a person
can judge it, and can append blank rows to judgements.csv (`--append`) to be filled with verdict and reason.

`score` reads judgements.csv (repo, path, line, code, verdict = true|debatable|false, reason, round) and prints,
per round and rule, the judged count and precision (true / judged; debatable counts against), and for the latest
findings file which judged findings are no longer reported.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from corpus import DEFAULT_CACHE, MANIFEST, Entry, read_manifest  # noqa: E402

FINDINGS = ROOT / "benchmarks" / "results" / "precision_findings.json"
JUDGEMENTS = HERE / "judgements.csv"
JUDGEMENT_FIELDS = ("round", "repo", "path", "line", "code", "verdict", "reason")


def tritonlens_command() -> list[str]:
    exe = Path(sys.executable).with_name("tritonlens")
    return [str(exe)] if exe.exists() else [shutil.which("tritonlens") or "tritonlens"]


def run_check(entries: list[Entry], cache: Path, target: str | None) -> list[dict[str, Any]]:
    """Findings of `tritonlens check --format json` over the corpus, each tagged with its manifest entry."""
    by_file = {str(cache / e.local): e for e in entries}
    missing = [p for p in by_file if not Path(p).exists()]
    if missing:
        raise SystemExit(f"{len(missing)} corpus files missing (first: {missing[0]}); run corpus.py first")
    cmd = [*tritonlens_command(), "check", "--format", "json"]
    if target:
        cmd += ["--target", target]
    proc = subprocess.run([*cmd, *by_file], capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"tritonlens check failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    out = []
    for raw in json.loads(proc.stdout):
        entry = by_file[raw["path"]]
        out.append(
            {
                "repo": entry.repo,
                "commit": entry.commit,
                "path": entry.path,
                "platform": entry.platform,
                "line": raw["span"]["line"],
                "code": raw["code"],
                "severity": raw["severity"],
                "kernel": raw.get("kernel"),
                "rule_platforms": raw.get("platforms", []),
                "message": raw["message"],
            }
        )
    return out


def summarise(findings: list[dict[str, Any]], entries: list[Entry]) -> dict[str, Any]:
    per_platform: dict[str, dict[str, int]] = {}
    for platform in sorted({e.platform for e in entries}):
        mine = [f for f in findings if f["platform"] == platform]
        foreign = [f for f in mine if f["rule_platforms"] and platform not in f["rule_platforms"]]
        per_platform[platform] = {
            "files": sum(1 for e in entries if e.platform == platform),
            "findings": len(mine),
            "other_platform_only": len(foreign),
        }
    return {
        "per_rule": dict(sorted(Counter(f["code"] for f in findings).items())),
        "per_platform": per_platform,
    }


def cmd_run(args: argparse.Namespace) -> int:
    """Two runs: the CLI's default target over everything (what a user gets), and each file with --target set to
    the platform it is written for (the findings that are judged: rules of the other platform are not in question)."""
    entries = read_manifest(args.manifest)
    default = run_check(entries, args.cache, args.target)
    matched: list[dict[str, Any]] = []
    for platform in sorted({e.platform for e in entries}):
        matched += run_check([e for e in entries if e.platform == platform], args.cache, platform)
    payload = {
        "files": len(entries),
        "default_target": {"target": args.target or "default", "summary": summarise(default, entries)},
        "summary": summarise(matched, entries),
        "findings": matched,
    }
    out = args.out or args.findings
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(
        f"{len(matched)} findings on {len(entries)} files with the target of each file's platform -> {out}"
    )
    for code, count in payload["summary"]["per_rule"].items():
        print(f"  {code:7} {count}")
    print(f"with target {payload['default_target']['target']}:")
    for platform, row in payload["default_target"]["summary"]["per_platform"].items():
        share = row["other_platform_only"] / row["findings"] if row["findings"] else 0.0
        print(
            f"  {platform}: {row['findings']} findings on {row['files']} files, {share:.0%} from other-platform rules"
        )
    return 0


def stratified(findings: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """Up to n findings, as even across rules as the counts allow; within a rule, distinct files first."""
    rng = random.Random(seed)
    pools: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in sorted(findings, key=lambda f: (f["code"], f["repo"], f["path"], f["line"])):
        pools[f["code"]].append(f)
    ordered: dict[str, list[dict[str, Any]]] = {}
    for code, pool in pools.items():
        rng.shuffle(pool)
        seen: set[str] = set()
        first = [f for f in pool if not (f["path"] in seen or seen.add(f["path"]))]  # type: ignore[func-returns-value]
        ordered[code] = first + [f for f in pool if f not in first]
    picked: list[dict[str, Any]] = []
    while len(picked) < n and any(ordered.values()):
        for code in sorted(ordered):
            if ordered[code] and len(picked) < n:
                picked.append(ordered[code].pop(0))
    return picked


def excerpt(cache: Path, finding: dict[str, Any], radius: int) -> str:
    path = cache / f"{finding['repo'].replace('/', '+')}/{finding['path']}"
    lines = path.read_text(encoding="utf-8").splitlines()
    lo, hi = max(1, finding["line"] - radius), min(len(lines), finding["line"] + radius)
    return "\n".join(f"{'>' if i == finding['line'] else ' '}{i:5} {lines[i - 1]}" for i in range(lo, hi + 1))


def read_judgements(path: Path = JUDGEMENTS) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def key(row: dict[str, Any]) -> tuple[str, str, int, str]:
    return (row["repo"], row["path"], int(row["line"]), row["code"])


def cmd_sample(args: argparse.Namespace) -> int:
    findings = json.loads(args.findings.read_text(encoding="utf-8"))["findings"]
    judged = {key(r) for r in read_judgements(args.judgements)}
    if args.unjudged:
        findings = [f for f in findings if key(f) not in judged]
    if args.codes:
        wanted = [c.strip().upper() for c in args.codes.split(",") if c.strip()]
        findings = [f for f in findings if any(f["code"].startswith(c) for c in wanted)]
    picked = stratified(findings, args.n, args.seed)
    for i, f in enumerate(picked, 1):
        print(f"### {i}. {f['code']} {f['repo']}:{f['path']}:{f['line']} ({f['platform']}) [{f['kernel']}]")
        print(f"    {f['message']}")
        print(excerpt(args.cache, f, args.radius))
        print()
    if args.append:
        new = not args.judgements.exists()
        with args.judgements.open("a", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=JUDGEMENT_FIELDS, lineterminator="\n")
            if new:
                writer.writeheader()
            for f in picked:
                if key(f) not in judged:
                    writer.writerow(
                        {"round": args.round, **{k: f[k] for k in ("repo", "path", "line", "code")}}
                    )
    print(f"{len(picked)} sampled from {len(findings)} findings", file=sys.stderr)
    return 0


def precision_table(rows: list[dict[str, str]]) -> list[str]:
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        per_rule[r["code"]][r["verdict"]] += 1
    total: Counter[str] = Counter()
    lines = ["| rule | judged | true | debatable | false | precision |", "|---|---:|---:|---:|---:|---:|"]
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        n = sum(c.values())
        lines.append(
            f"| {code} | {n} | {c['true']} | {c['debatable']} | {c['false']} | {c['true'] / n:.0%} |"
        )
    n = sum(total.values())
    if n:
        lines.append(
            f"| **all** | {n} | {total['true']} | {total['debatable']} | {total['false']} | {total['true'] / n:.0%} |"
        )
    return lines


def cmd_score(args: argparse.Namespace) -> int:
    rows = [r for r in read_judgements(args.judgements) if r.get("verdict")]
    bad = [r for r in rows if r["verdict"] not in ("true", "debatable", "false")]
    if bad:
        raise SystemExit(f"unknown verdict {bad[0]['verdict']!r} in {args.judgements.name}")
    current = None
    if args.findings.exists():
        current = {key(f) for f in json.loads(args.findings.read_text(encoding="utf-8"))["findings"]}
    for rnd in sorted({r["round"] for r in rows}):
        mine = [r for r in rows if r["round"] == rnd]
        print(f"\n#### Round {rnd}: as judged ({len(mine)} findings)\n")
        print("\n".join(precision_table(mine)))
    if current is not None:
        latest = {}
        for r in rows:  # the latest verdict on each finding that the current run still reports
            if key(r) in current:
                latest[key(r)] = r
        print(
            f"\n#### Still reported by the current run ({len(latest)} of {len({key(r) for r in rows})} judged)\n"
        )
        print("\n".join(precision_table(list(latest.values()))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--findings", type=Path, default=FINDINGS)
    parser.add_argument(
        "--judgements", type=Path, default=JUDGEMENTS, help="judgements file (held-out: judgements_heldout.csv)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="triage the corpus with `tritonlens check`")
    run.add_argument(
        "--target", default=None, help="target of the user's-view run (default: the CLI's default)"
    )
    run.add_argument("--out", type=Path, default=None, help="default: --findings")
    run.set_defaults(func=cmd_run)
    sample = sub.add_parser("sample", help="print a stratified sample with its code")
    sample.add_argument("-n", type=int, default=90)
    sample.add_argument("--seed", type=int, default=9)
    sample.add_argument("--radius", type=int, default=12, help="lines of code shown around each finding")
    sample.add_argument("--unjudged", action="store_true", help="only findings without a judgement yet")
    sample.add_argument("--codes", default="", help="comma-separated rule codes or prefixes to sample from")
    sample.add_argument("--append", action="store_true", help="add blank judgement rows for the sample")
    sample.add_argument("--round", default="1", help="round label for appended rows")
    sample.set_defaults(func=cmd_sample)
    score = sub.add_parser("score", help="per-rule precision of judgements.csv")
    score.set_defaults(func=cmd_score)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
