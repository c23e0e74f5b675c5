"""Recall of level-1 triage on the first-draft kernels in bench/: known problems named by at least one finding.

    python benchmarks/recall_first_drafts.py [--json benchmarks/results/recall_first_drafts.json]

Each bench file lists, under `Known problems:` in its docstring, what an experienced kernel engineer would name,
one line each with the source lines it is about ("- lines 33-36: ..."). A problem counts as *named* when triage
reports a finding whose code belongs to the problem's topic, on one of those lines or anywhere in the jit function
that holds them (its launches included: a finding's `kernel` is that function). Topics are recognised from
the problem's words (TOPICS below: the judgement of which codes name which problem lives here, in one table,
and is printed with the results). "Before" leaves out the codes added for issue 11 (NEW_CODES); "after" uses all.
Problems no topic recognises count as missed in both columns.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# Codes added by issue 11 ("catch what first drafts get wrong").
NEW_CODES = frozenset(f"TL{n}" for n in range(125, 137))

# (topic, words that recognise it in a problem line, codes whose finding names it). First match wins.
TOPICS: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("round trip between launches", r"round trip|two launches", frozenset({"TL128"})),
    ("scalar scan", r"\bscan\b", frozenset({"TL134", "TL107"})),
    (
        "rank-1 updates / no tl.dot",
        r"rank-1|outer product|not tl\.dot|no tl\.dot",
        frozenset({"TL133", "TL107", "TL210"}),
    ),
    ("block reduction in a loop", r"inside the .*loops?|reduction every iteration", frozenset({"TL125"})),
    (
        "multiple passes over a row",
        r"passes over|read twice|read three times|two passes|three passes",
        frozenset({"TL108"}),
    ),
    ("int64 offsets", r"int64", frozenset({"TL113"})),
    ("hand-written transcendental", r"tanh|sigmoid|softplus|by hand", frozenset({"TL129"})),
    ("grid-wide atomic", r"atomic", frozenset({"TL132", "TL112"})),
    ("per-element division or modulo of indices", r"modulo|recovered", frozenset({"TL130", "TL124"})),
    ("division instead of reciprocal multiply", r"division", frozenset({"TL135"})),
    ("column / strided access", r"strided|column of|coalesc", frozenset({"TL109", "TL131", "TL207"})),
    ("no L2 grouping of tiles", r"grouping|program order", frozenset({"TL136"})),
    (
        "block too small / warps vs elements",
        r"BLOCK_SIZE=|BLOCK_N=|tiles with|tiny vectors|small programs",
        frozenset({"TL103", "TL126", "TL127", "TL110", "TL211"}),
    ),
    (
        "one program per row/column/element with scalar work",
        r"one program per",
        frozenset({"TL104", "TL105", "TL107", "TL131", "TL134", "TL125"}),
    ),
)

_PROBLEM = re.compile(r"^-\s*lines?\s+([0-9 ,\-]+):\s*(.+)$")


@dataclass
class Problem:
    file: str
    lines: set[int]
    text: str
    topic: str | None
    codes: frozenset[str]


def problems_of(path: Path) -> list[Problem]:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    _, _, known = doc.partition("Known problems:")
    out: list[Problem] = []
    for raw in known.splitlines():
        m = _PROBLEM.match(raw.strip())
        if not m:
            continue
        lines = _lines(m.group(1))
        # "(35, 44, 47)" at the end of a problem names more lines
        extra = re.search(r"\(([0-9 ,]+)\)\s*$", m.group(2))
        if extra:
            lines |= _lines(extra.group(1))
        topic = next(((name, codes) for name, words, codes in TOPICS if re.search(words, m.group(2))), None)
        rel = str(path.relative_to(ROOT))
        out.append(
            Problem(rel, lines, m.group(2), topic[0] if topic else None, topic[1] if topic else frozenset())
        )
    return out


def _lines(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = (int(x) for x in part.split("-"))
            out.update(range(lo, hi + 1))
        elif part:
            out.add(int(part))
    return out


Found = tuple[str, int, int, str | None]  # code, first line, last line, kernel


def findings_of(path: Path) -> tuple[list[Found], dict[str, range]]:
    """Triage findings of a file and the line range of each jit function."""
    from tritonlens.analysis.triage import triage

    result = triage(path.read_text(encoding="utf-8"), str(path))
    found = [(f.code, f.span.line, f.span.end_line, f.kernel) for f in result.findings]
    ranges = {k.name: range(k.span.line, k.span.end_line + 1) for k in result.module.functions}
    return found, ranges


def named(
    problem: Problem, found: list[Found], ranges: dict[str, range], exclude: frozenset[str]
) -> list[str]:
    kernels = {name for name, lines in ranges.items() if problem.lines & set(lines)}
    return sorted(
        {
            code
            for code, start, end, kernel in found
            if code in problem.codes
            and code not in exclude
            and (problem.lines & set(range(start, end + 1)) or kernel in kernels)
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--json", type=Path, default=ROOT / "benchmarks" / "results" / "recall_first_drafts.json"
    )
    parser.add_argument(
        "--tasks", type=Path, default=BENCH, help="folder of <category>/<task>.py files (bench/blind for the blind set)"
    )
    args = parser.parse_args(argv)
    files = sorted(args.tasks.resolve().glob("*/*.py"))
    if not files:
        print("no bench kernels found under bench/", file=sys.stderr)
        return 1
    rows = []
    for path in files:
        found, ranges = findings_of(path)
        for p in problems_of(path):
            before, after = named(p, found, ranges, NEW_CODES), named(p, found, ranges, frozenset())
            rows.append(
                {
                    "file": p.file,
                    "lines": sorted(p.lines),
                    "problem": p.text,
                    "topic": p.topic,
                    "before": before,
                    "after": after,
                }
            )
    total = len(rows)
    n_before = sum(1 for r in rows if r["before"])
    n_after = sum(1 for r in rows if r["after"])
    print(f"{'file':34} {'problem':70} before  after")
    for r in rows:
        print(
            f"{r['file']:34} {r['problem'][:70]:70} {','.join(r['before']) or '-':7} {','.join(r['after']) or '-'}"
        )
    print(
        f"\nrecall before: {n_before}/{total} = {n_before / total:.0%}; after: {n_after}/{total} = {n_after / total:.0%}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        "problems": total,
        "named_before": n_before,
        "named_after": n_after,
        "recall_before": n_before / total,
        "recall_after": n_after / total,
        "new_codes": sorted(NEW_CODES),
        "topics": [[t, w, sorted(c)] for t, w, c in TOPICS],
        "rows": rows,
    }
    args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"saved {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
