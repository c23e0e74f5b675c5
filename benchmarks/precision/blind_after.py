"""After-tuning figures on the blind sample of issue 24 (now a tuning set, no longer blind).

The judgements (benchmarks/precision/blind2_judgements_*.csv) were written on the product's output before any
change. After the rule fixes the product is run again on the same files (`blind_sample.py level1` and `ir`); this
script matches each new finding to its judged row by (file, line, rule) and reports per rule:
- before: the judged findings (TP / debatable / FP);
- after: the judged findings still reported, with their verdicts, and the judged TPs no longer reported (lost);
- new: findings the judged output did not have (unjudged: listed, counted apart, never scored as TP).

    python benchmarks/precision/blind_after.py --platform cuda --judgements J --level1 L1.json --ir-dir D --out R.json
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
from pathlib import Path
from typing import Any


def _key(path: str, line: int, code: str) -> tuple[str, int, str]:
    return (path.split("/trees/")[-1].split("/", 1)[-1] if "/trees/" in path else path, int(line), code)


def _suffix_match(judged_path: str, found_path: str) -> bool:
    return found_path.endswith(judged_path)


def _after_findings(level1: Path, ir_dir: Path, family: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in json.loads(level1.read_text(encoding="utf-8")):
        if f["level"] == 1:
            out.append({"path": f["path"], "line": f["span"]["line"], "code": f["code"], "severity": f["severity"],
                        "message": f["message"], "level": 1})  # fmt: skip
    for fn in sorted(ir_dir.glob("*.json")):
        data = json.loads(fn.read_text(encoding="utf-8"))
        for f in data["findings"]:
            if f["code"].startswith(family):
                out.append({"path": data["path"], "line": f["span"]["line"], "code": f["code"],
                            "severity": f["severity"], "message": f["message"], "level": f["level"]})  # fmt: skip
    return out


def _count(rows: list[dict[str, str]]) -> dict[str, Any]:
    c = collections.Counter(r["verdict"] for r in rows)
    n = len(rows)
    return {"judged": n, "TP": c["TP"], "debatable": c["debatable"], "FP": c["FP"],
            "precision_tp": round(c["TP"] / n, 3) if n else None}  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--platform", choices=("cuda", "ascend"), required=True)
    p.add_argument("--judgements", type=Path, required=True)
    p.add_argument("--level1", type=Path, required=True)
    p.add_argument("--ir-dir", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    family = "TL3" if args.platform == "cuda" else "TL4"
    with args.judgements.open(newline="", encoding="utf-8") as fh:
        judged = list(csv.DictReader(fh))
    found = _after_findings(args.level1, args.ir_dir, family)
    kept: list[dict[str, str]] = []
    matched: set[int] = set()
    for r in judged:
        hit = next(
            (i for i, f in enumerate(found)
             if f["code"] == r["code"] and f["line"] == int(r["line"]) and _suffix_match(r["path"], f["path"])),
            None,
        )  # fmt: skip
        if hit is not None:
            matched.add(hit)
            kept.append(r | {"severity_after": found[hit]["severity"]})
    new = [f for i, f in enumerate(found) if i not in matched]
    per_rule: dict[str, Any] = {}
    for code in sorted({r["code"] for r in judged} | {f["code"] for f in new}):
        before = [r for r in judged if r["code"] == code]
        after = [r for r in kept if r["code"] == code]
        kept_rows = {(k["path"], k["line"], k["code"]) for k in after}
        lost = [
            r for r in before if r["verdict"] == "TP" and (r["path"], r["line"], r["code"]) not in kept_rows
        ]
        per_rule[code] = {
            "before": _count(before),
            "after_judged": _count(after),
            "lost_TP": [f"{r['path']}:{r['line']}" for r in lost],
            "new_unjudged": sum(1 for f in new if f["code"] == code),
        }
    warning_fp = [r for r in kept if r["verdict"] == "FP" and r["severity_after"] in ("warning", "error")]
    level = {
        "level1": [r for r in judged if r["level"] == "1"],
        "ir": [r for r in judged if r["level"] != "1"],
    }
    result = {
        "platform": args.platform,
        "label": "after tuning on this sample (now a tuning set, no longer blind)",
        "level1": {"before": _count(level["level1"]), "after_judged": _count([r for r in kept if r["level"] == "1"])},
        f"{family}xx": {
            "before": _count([r for r in level["ir"] if r["code"].startswith(family)]),
            "after_judged": _count([r for r in kept if r["level"] != "1" and r["code"].startswith(family)]),
        },
        "warning_or_error_fp_after": {"count": len(warning_fp),
                                      "items": [f"{r['code']} {r['path']}:{r['line']}" for r in warning_fp]},
        "new_unjudged": [{k: f[k] for k in ("code", "path", "line", "severity", "message")} for f in new],
        "per_rule": per_rule,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("platform", "level1", f"{family}xx")}))
    print("new unjudged:", len(new), "warning FP after:", len(warning_fp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
