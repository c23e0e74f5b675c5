"""The engines talk to the runner in the protocol's types: every payload a runner call in server/engine sends is a
typed request (CompileRequest, RunRequest, ProfileRequest, VerifyRequest), never a dict literal, and every runner
the engines hold is typed with the `Runner` interface, never `Any`. Read from the source (AST), so a new call or a
new holder is checked too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "server" / "engine"
RUNNER_METHODS = {"compile": 0, "submit": 0, "run": 1, "profile": 1, "verify": 1}  # method -> payload position


def _modules(root: Path) -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))}


def _functions(trees: dict[Path, ast.Module]) -> dict[str, list[ast.FunctionDef]]:
    out: dict[str, list[ast.FunctionDef]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                out.setdefault(node.name, []).append(node)
    return out


def _enclosing(tree: ast.Module, target: ast.AST) -> ast.FunctionDef | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(n is target for n in ast.walk(node)):
            if best is None or any(n is node for n in ast.walk(best)):
                best = node
    return best


def _typed_annotation(annotation: ast.expr | None) -> bool | None:
    """True: a request type; False: a dict or Any; None: no annotation."""
    if annotation is None:
        return None
    text = ast.unparse(annotation)
    if "dict" in text.lower() or "Any" in text or "Mapping" in text:
        return False
    return "Request" in text


def _payload_kind(expr: ast.expr, func: ast.FunctionDef | None, functions: dict[str, list[ast.FunctionDef]],
                  depth: int = 0) -> str:
    """'typed', 'dict' (a literal or a dict-typed value) or 'unknown' for the expression a runner call sends."""
    if depth > 6:
        return "unknown"
    if isinstance(expr, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(expr, ast.Call):
        name = expr.func.attr if isinstance(expr.func, ast.Attribute) else getattr(expr.func, "id", "")
        if name == "dict":
            return "dict"
        if name.endswith("Request"):
            return "typed"
        if name == "replace" and expr.args:  # dataclasses.replace(request, ...) keeps the request's type
            return _payload_kind(expr.args[0], func, functions, depth + 1)
        defs = functions.get(name, [])
        kinds = {"typed" if _typed_annotation(d.returns) else "dict" if _typed_annotation(d.returns) is False
                 else "unknown" for d in defs}
        return kinds.pop() if len(kinds) == 1 else "unknown"
    if isinstance(expr, ast.Name) and func is not None:
        for arg in [*func.args.args, *func.args.kwonlyargs]:
            if arg.arg == expr.id:
                typed = _typed_annotation(arg.annotation)
                return "typed" if typed else "dict" if typed is False else "unknown"
        kinds = set()
        for node in ast.walk(func):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == expr.id:
                typed = _typed_annotation(node.annotation)
                kinds.add("typed" if typed else "dict" if typed is False else "unknown")
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id
                                                       for t in node.targets):
                kinds.add(_payload_kind(node.value, func, functions, depth + 1))
        if "dict" in kinds:
            return "dict"
        return "typed" if kinds == {"typed"} else "unknown"
    return "unknown"


def _runner_calls(trees: dict[Path, ast.Module]) -> list[tuple[Path, ast.Call, ast.expr | None]]:
    calls = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in RUNNER_METHODS or "runner" not in ast.unparse(node.func.value).lower():
                continue
            at = RUNNER_METHODS[node.func.attr]
            payload = node.args[at] if len(node.args) > at else next(
                (k.value for k in node.keywords if k.arg in ("payload", "req", "request", "job")), None)
            calls.append((path, node, payload))
    return calls


def dict_payloads(root: Path) -> list[str]:
    """'file:line: why' for every runner call under `root` whose payload is not a typed request."""
    trees = _modules(root)
    functions = _functions(trees)
    problems = []
    for path, call, payload in _runner_calls(trees):
        where = f"{path.relative_to(root.parent.parent)}:{call.lineno}"
        if payload is None:
            problems.append(f"{where}: no payload found in {ast.unparse(call)[:80]}")
            continue
        kind = _payload_kind(payload, _enclosing(trees[path], call), functions)
        if kind != "typed":
            problems.append(f"{where}: sends {ast.unparse(payload)[:60]} ({kind}, not a typed request)")
    return problems


def untyped_runners(root: Path) -> list[str]:
    """'file:line: name' for every parameter, field or annotated name called *runner that is typed Any, not typed
    at all, or typed with anything but the Runner interface (a runner's name, `str`, aside)."""
    problems = []
    for path, tree in _modules(root).items():
        for node in ast.walk(tree):
            found: list[tuple[str, ast.expr | None, int]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args
                found += [(a.arg, a.annotation, a.lineno) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
                if isinstance(node, ast.Lambda):
                    found = [(n, a, node.lineno) for n, a, _ in found]  # a lambda cannot annotate; judged below
            elif isinstance(node, ast.AnnAssign):
                target = node.target
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                found.append((name, node.annotation, node.lineno))
            for name, annotation, line in found:
                if not name.lower().endswith("runner") or isinstance(node, ast.Lambda):
                    continue
                text = ast.unparse(annotation) if annotation is not None else ""
                if text in ("str", "str | None"):  # a runner's name (ceilings are cached per runner)
                    continue
                if not text or "Any" in text or "Runner" not in text:
                    problems.append(f"{path.relative_to(root.parent.parent)}:{line}: {name}: {text or 'untyped'}")
    return problems


def test_no_dict_literal_payload_reaches_the_runner_from_the_engine():
    calls = _runner_calls(_modules(ENGINE))
    methods = {c.func.attr for _, c, _ in calls}
    assert {"compile", "verify", "profile"} <= methods, methods  # the scan sees the engine's runner calls
    assert dict_payloads(ENGINE) == []


def test_no_runner_in_the_engine_is_typed_any():
    assert untyped_runners(ENGINE) == []


def test_the_scans_catch_a_dict_payload_and_an_any_runner(tmp_path: Path):
    # The same scans on a small engine written the old way: each finds what it must.
    engine = tmp_path / "server" / "engine"
    engine.mkdir(parents=True)
    (engine / "old.py").write_text(
        "from typing import Any\n"
        "def verify(runner: Any, backend: str, source: str) -> dict:\n"
        "    return runner.verify(backend, {'harness': {'mode': 'kernelbench', 'source': source}})\n"
        "def profile(runner: Any, backend: str) -> dict:\n"
        "    payload = {'harness': {'mode': 'kernelbench'}}\n"
        "    return runner.profile(backend, payload)\n"
        "class Gate:\n"
        "    runner: Any\n"
        "    def payload(self, source: str) -> dict[str, Any]:\n"
        "        return {'harness': {'source': source}}\n"
        "    def check(self, source: str) -> dict:\n"
        "        return self.runner.verify('cuda', self.payload(source))\n"
    )
    assert len(dict_payloads(engine)) == 3
    assert [p.rsplit(": ", 2)[1] for p in untyped_runners(engine)] == ["runner", "runner", "runner"]
