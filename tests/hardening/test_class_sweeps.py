"""Issue 14 item 15, the class: nothing the product loads from a file or a payload may run code. Every `torch.load`
passes `weights_only=True`, and no module loads pickles, marshal data or unsafe YAML (a scan of every module, so a
new call cannot quietly drop the guard)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("server", "analysis", "ascend_runner")
UNSAFE = {("pickle", "load"), ("pickle", "loads"), ("marshal", "load"), ("marshal", "loads"), ("yaml", "load")}


def _calls(name: str, attr: str) -> list[tuple[str, ast.Call]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if f".{attr}" not in text:  # parse only the modules that could hold such a call
                continue
            for node in ast.walk(ast.parse(text, str(path))):
                func = node.func if isinstance(node, ast.Call) else None
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == attr
                    and isinstance(func.value, ast.Name)
                    and func.value.id == name
                ):
                    out.append((f"{path.relative_to(ROOT)}:{node.lineno}", node))
    return out


def test_every_torch_load_refuses_code():
    loads = _calls("torch", "load")
    assert loads, "the snapshot replay loads tensors with torch.load"
    for where, call in loads:
        flag = next((k.value for k in call.keywords if k.arg == "weights_only"), None)
        assert isinstance(flag, ast.Constant) and flag.value is True, f"{where}: torch.load without weights_only=True"


def test_nothing_loads_pickles():
    found = [where for name, attr in sorted(UNSAFE) for where, _ in _calls(name, attr)]
    assert not found, found
