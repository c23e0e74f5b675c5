"""Makes `recipe_helpers` (and the interpreter checker's helpers) importable from this folder's tests."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "interp"))
sys.path.insert(0, str(HERE.parent))  # warm_runner
