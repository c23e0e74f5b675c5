"""Recorded launches and the kernel text they belong to: a record is valid while the kernel's source is the
text it was recorded from (edits invalidate what no longer matches). Pure: text in, digests out."""

from __future__ import annotations

import ast
import hashlib

from ..kernels import parse_module
from ..source.lines import source_lines


def kernel_source_hash(source: str, kernel: str) -> str | None:
    """Digest of the kernel's text (first decorator line through its last line, trailing blanks ignored);
    None when the source does not parse or defines no function of that name. Reads the shared parse."""
    tree = parse_module(source).tree
    if tree is None:
        return None
    node = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == kernel
        ),
        None,
    )
    if node is None:
        return None
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    lines = source_lines(source)[first - 1 : node.end_lineno or node.lineno]
    text = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def launch_key(launch: dict) -> str:
    """What makes two recorded launches different for levels 2-4: types, values, hints, options, shapes."""
    shapes = [(a.get("dtype"), a.get("shape"), a.get("strides")) for a in launch.get("args") or []]
    parts = (
        sorted((launch.get("signature") or {}).items()),
        sorted((k, repr(v)) for k, v in (launch.get("constants") or {}).items()),
        sorted(launch.get("divisibility") or []),
        sorted((k, repr(v)) for k, v in (launch.get("options") or {}).items()),
        shapes,
        launch.get("grid"),
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]
