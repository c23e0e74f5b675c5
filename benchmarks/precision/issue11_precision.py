"""Precision of the issue-11 rules (TL125-TL135) on the public corpus, from hand judgements.

    python benchmarks/precision/corpus.py          # once: materialise the corpus (see that script)
    python benchmarks/precision/issue11_precision.py [--cache DIR]

Runs level-1 triage on every manifest file, keeps findings of the issue-11 codes whose rule applies to the file's
platform, and scores them against benchmarks/precision/judgements_issue11.csv (repo, path, line, code, verdict =
true|debatable|false, reason): precision = true / judged (debatable counts against). Prints a table per rule and
saves benchmarks/results/precision_issue11.json. Judged rows no longer reported are listed (a narrowed rule).
Only positions and messages are stored, never the corpus code.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from corpus import DEFAULT_CACHE, MANIFEST, read_manifest  # noqa: E402

CODES = tuple(f"TL{n}" for n in range(125, 136))
JUDGEMENTS = HERE / "judgements_issue11.csv"


def findings(cache: Path) -> list[dict[str, object]]:
    from tritonlens.analysis.triage import triage

    out: list[dict[str, object]] = []
    for entry in read_manifest(MANIFEST):
        path = cache / entry.local
        if not path.is_file():
            continue
        for f in triage(path.read_text(encoding="utf-8", errors="replace"), str(path)).findings:
            if f.code in CODES and entry.platform in f.platforms:
                out.append({"repo": entry.repo, "path": entry.path, "line": f.span.line, "code": f.code,
                            "message": f.message})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    found = findings(args.cache)
    if not found and not any(args.cache.iterdir() if args.cache.is_dir() else ()):
        print(f"no corpus under {args.cache}: run benchmarks/precision/corpus.py first", file=sys.stderr)
        return 1
    reported = {(f["repo"], f["path"], f["line"], f["code"]) for f in found}
    with JUDGEMENTS.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    per_rule: dict[str, Counter[str]] = {}
    stale = []
    for row in rows:
        key = (row["repo"], row["path"], int(row["line"]), row["code"])
        if key not in reported:
            stale.append(row)
            continue
        per_rule.setdefault(row["code"], Counter())[row["verdict"]] += 1
    counts = Counter(f["code"] for f in found)
    table = []
    print(f"{'rule':6} {'reported':>8} {'judged':>6} {'true':>5} {'debat.':>6} {'false':>5} {'precision':>9}")
    for code in CODES:
        c = per_rule.get(code, Counter())
        judged = sum(c.values())
        precision = c["true"] / judged if judged else None
        table.append({"code": code, "reported": counts.get(code, 0), "judged": judged, "true": c["true"],
                      "debatable": c["debatable"], "false": c["false"], "precision": precision})  # fmt: skip
        shown = f"{precision:.0%}" if precision is not None else "-"
        print(
            f"{code:6} {counts.get(code, 0):>8} {judged:>6} {c['true']:>5} {c['debatable']:>6} {c['false']:>5} {shown:>9}"
        )
    total = sum(sum(c.values()) for c in per_rule.values())
    true = sum(c["true"] for c in per_rule.values())
    print(
        f"all    {len(found):>8} {total:>6} {true:>5}   precision {true / total:.0%}"
        if total
        else "nothing judged"
    )
    for row in stale:
        print(f"judged but no longer reported: {row['code']} {row['repo']} {row['path']}:{row['line']}")
    out = ROOT / "benchmarks" / "results" / "precision_issue11.json"
    out.write_text(
        json.dumps({"rules": table, "findings": found, "stale": stale}, indent=1) + "\n", encoding="utf-8"
    )
    print(f"saved {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
