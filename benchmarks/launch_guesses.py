"""How often levels 3-4 compile a kernel with guessed values: per launched kernel, the values and types of its first
specialization that no launch, caller, `get_inputs()`, pragma or recorded run showed (analysis.compiler.variants.
variant_guesses). Pure AST: no compile, no GPU.

    .venv/bin/python benchmarks/launch_guesses.py FILE|DIR ... [--json OUT.json] [--list]

Prints kernels, kernels with at least one guess, and guesses in all; `--list` prints each kernel's guesses. Run it
under another checkout's package (PYTHONPATH) for a before/after figure of a change to the launch resolver.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def count(files: list[Path]) -> dict:
    from tritonlens.analysis.compiler.variants import variant_guesses
    from tritonlens.analysis.kernels import parse_module
    from tritonlens.analysis.specialize.choose import specializations

    rows = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
            module = parse_module(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for kernel in (k for k in module.kernels if k.launched):
            specs = specializations(text, kernel.name)
            if specs:
                spec = specs[0]
                values = {a: spec.constants.get(a, t) for a, t in spec.signature.items()}
                rows.append({"file": str(file), "kernel": kernel.name, "line": kernel.node.lineno,
                             "guesses": sorted(variant_guesses(spec).values()),
                             "values": {a: str(v) for a, v in values.items()}, "provenance": dict(spec.provenance)})
    return {"kernels": len(rows), "with_guess": sum(bool(r["guesses"]) for r in rows),
            "guesses": sum(len(r["guesses"]) for r in rows), "rows": rows}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("paths", nargs="+")
    p.add_argument("--json")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    files = sorted(f for x in args.paths for f in (Path(x).rglob("*.py") if Path(x).is_dir() else [Path(x)]))
    out = count(files)
    if args.list:
        for r in out["rows"]:
            print(f"{r['file']} {r['kernel']}: {', '.join(r['guesses']) or '-'}")
    print(f"{out['kernels']} launched kernels, {out['with_guess']} compiled with a guess, {out['guesses']} guesses")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
