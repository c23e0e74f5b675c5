"""Per-task table of two bench reports of the same tasks (a blind figure and a later run on the same set):
speedup before -> after, against torch.compile and eager, what won, and for every task that missed, why (the
candidate that came closest and the gate's reason). Prints Markdown; reads only the reports' JSON.

    .venv/bin/python benchmarks/gpu/bench_compare.py bench/results/h200-blind2 bench/results/h200-blind2-tuning
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _tasks(folder: str) -> dict[str, dict[str, Any]]:
    report = json.loads((Path(folder) / "bench-report.json").read_text(encoding="utf-8"))
    return {t["task"]: t for t in report["tasks"]}


def _x(value: Any) -> str:
    return f"{value:.2f}x" if isinstance(value, (int, float)) else "-"


def why_missed(task: dict[str, Any]) -> str:
    """The closest rejected candidate and the gate's reason, else the task's own miss line."""
    opt = task.get("optimize") or {}
    rejected = opt.get("rejected") or []
    timed = [c for c in rejected if isinstance(c.get("speedup"), (int, float))]
    if timed:
        best = max(timed, key=lambda c: c["speedup"])
        return f"best: {best.get('producer')} {best['speedup']:.2f}x ({best.get('stage')}); {len(rejected)} tried"
    if rejected:
        first = rejected[0]
        return f"{first.get('producer')} rejected at {first.get('stage')}: {str(first.get('reason'))[:90]}"
    return str(task.get("miss") or "no candidate")[:120]


def table(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], root: str) -> str:
    rows = ["| task | blind | after | vs torch.compile | vs eager | won by | missed because |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in sorted(before):
        b, a = before[name], after.get(name, before[name])
        won = ", ".join(a.get("producers") or [])  # what the final check kept, as the bench counts it
        opt = a.get("optimize") or {}
        undone = ", ".join(c.get("producer", "?") for c in opt.get("applied") or [])
        if undone and not won:  # applied step by step, then not confirmed by the check of the final text
            won = f"none ({undone} undone: the final text's check read {(opt.get('overall') or {}).get('reason', '?')[:40]})"
        speed = a.get("speedup") if a.get("status") == "done" else None
        missed = "" if (speed or 0) >= 1.5 else why_missed(a)
        rows.append(f"| {name.removeprefix(root)} | {_x(b.get('speedup'))} | {_x(speed)} | "
                    f"{_x(a.get('vs_compile'))} | {_x(a.get('vs_eager'))} | {won or '-'} | {missed} |")
    return "\n".join(rows)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--strip", default="", help="prefix dropped from task paths (the default keeps repository paths)")
    args = p.parse_args()
    print(table(_tasks(args.before), _tasks(args.after), args.strip))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
