"""`tritonlens rules`: every rule with code, title, platforms and rationale."""

from __future__ import annotations

import argparse
import json

from ...analysis.core import rules


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("rules", help="list every rule with its code, title, platforms and rationale")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    all_rules = rules.all_rules()
    if args.format == "json":
        print(json.dumps([r.to_dict() for r in all_rules], indent=2))
        return 0
    for r in all_rules:
        fix = " [fix]" if r.has_fix else ""
        severity = r.severity.name.lower()
        if r.max_severity != r.severity:
            severity += f", {r.max_severity.name.lower()} {r.escalation}"
        if r.lowers_to is not None:
            severity += f", {r.lowers_to.name.lower()} {r.lowering}"
        print(f"{r.code}  {r.name}  ({', '.join(r.platforms)}; level {int(r.level)}; {severity}){fix}")
        print(f"    {r.title}")
        if r.confirms:
            print(f"    confirms {', '.join(c.lower for c in r.confirms)}")
    return 0
