"""The most likely value of a constexpr that no launch, pragma, config, heuristic or default shows.

Levels 3-4 still compile such a kernel, with a *labeled* guess: every value chosen here carries the provenance
marker `ASSUMED_TYPICAL`, and the pipeline names the guess in every finding of that compile, never above a
warning (server/pipeline.py). How the kernel body uses the name decides the kind of value:
- tested as a flag (`if HAS_BIAS:`, `not EVEN_K`) or named like one (`HAS_`, `IS_`, `USE_`, `EVEN_`): False;
- compared with strings (`ACTIVATION == "leaky_relu"`): the first string it is compared with;
- compared for equality with ints (`LOSS_TYPE == 1`, a selector): the smallest such case, so a branch runs;
- used as a dtype (`x.to(OUT_DTYPE)`, `dtype=ACC_TYPE`) or named like one (`DTYPE`, `_TYPE`): tl.float32;
- an int otherwise: the group size of grouped orderings is 8, stage counts 2, warps 4; a block dimension
  (a `tl.arange`/`tl.zeros`/`reshape` shape, or named BLOCK/TILE/SIZE/DIM) 64, a power of two every tutorial
  shape fits; any other int (a problem size such as K or N_COLS) 1024, a multiple of every usual block size.
Pure: AST in, values out.
"""

from __future__ import annotations

import ast
import re
from typing import Any

ASSUMED_TYPICAL = "assumed: a typical value (nothing shows this constexpr's value)"
_FLAG_NAME = re.compile(r"^(HAS|IS|USE|EVEN|ENABLE|WITH|DO|APPLY|NEED|SHOULD)_|_(ENABLED|FLAG)$", re.I)
_SHAPE_CALLS = frozenset({"arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr"})
_BLOCK_NAME = re.compile(r"BLOCK|TILE|SIZE|DIM|WIDTH|_B[MNK]?$|^B[MNKHD]$", re.I)
_DTYPE_NAME = re.compile(r"(^|_)(DTYPE|TYPE|DT)$", re.I)


def _uses(node: ast.AST, name: str) -> dict[str, Any]:
    """How the function body uses `name`: flags, compared strings, dtype positions."""
    found: dict[str, Any] = {
        "flag": False,
        "strings": [],
        "cases": [],
        "dtype": False,
        "shape": False,
        "unrolled": False,
    }

    def is_name(x: ast.AST) -> bool:
        return isinstance(x, ast.Name) and x.id == name

    for sub in ast.walk(node):
        if isinstance(sub, (ast.If, ast.IfExp, ast.While, ast.Assert)) and is_name(sub.test):
            found["flag"] = True
        elif isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not) and is_name(sub.operand):
            found["flag"] = True
        elif isinstance(sub, ast.BoolOp) and any(is_name(v) for v in sub.values):
            found["flag"] = True
        elif isinstance(sub, ast.Compare):
            sides = (sub.left, *sub.comparators)
            if any(is_name(x) for x in sides):
                found["strings"] += [
                    x.value for x in sides if isinstance(x, ast.Constant) and isinstance(x.value, str)
                ]
                if all(isinstance(op, (ast.Eq, ast.NotEq)) for op in sub.ops):  # a selector: `MODE == 2`
                    found["cases"] += [
                        x.value for x in sides if isinstance(x, ast.Constant) and type(x.value) is int
                    ]
        elif isinstance(sub, ast.Call):
            func = sub.func
            name_of = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name_of in _SHAPE_CALLS and any(is_name(x) for a in sub.args for x in ast.walk(a)):
                found["shape"] = True
            if name_of == "static_range" and any(is_name(x) for a in sub.args for x in ast.walk(a)):
                found["unrolled"] = True
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("to", "cast")
                and any(is_name(a) for a in sub.args)
            ):
                found["dtype"] = True
            if any(kw.arg in ("dtype", "dst_ty") and is_name(kw.value) for kw in sub.keywords):
                found["dtype"] = True
    return found


def typical_value(function: ast.FunctionDef, name: str) -> Any:
    """A labeled guess for constexpr `name` of `function` (see the module docstring)."""
    uses = _uses(function, name)
    if uses["strings"]:
        return uses["strings"][0]
    if uses["cases"] and not uses["shape"]:
        return min(uses["cases"], key=lambda v: (v < 0, abs(v)))  # a branch the kernel has (0 before 3)
    if uses["dtype"] or _DTYPE_NAME.search(name):
        return "tl.float32"
    if uses["flag"] or _FLAG_NAME.search(name):
        return False
    upper = name.upper()
    if "GROUP" in upper:
        return 8
    if "STAGES" in upper:
        return 2
    if "WARPS" in upper:
        return 4
    if uses["unrolled"]:
        return 4  # a fully unrolled loop count: small, so a guess never makes a huge compile
    if uses["shape"] or _BLOCK_NAME.search(name):
        return 64  # a block dimension: a power of two every tutorial shape fits
    return 1024  # a problem size (K, N_COLS, SEQ_LEN): a multiple of every usual block size


# Past this many guessed block dimensions, each is guessed smaller: their tiles multiply (a 64x64x64 tile
# of guesses made one public kernel's compile take minutes), and no launch showed the real sizes anyway.
MANY_BLOCK_GUESSES = 3
SMALLER_BLOCK = 32


def typical_values(function: ast.FunctionDef, names: list[str]) -> dict[str, Any]:
    """typical_value of each of `names` (constexprs guessed together for one compile), block dimensions made
    smaller when many are guessed at once."""
    values = {name: typical_value(function, name) for name in names}
    blocks = [n for n, v in values.items() if v == 64 and not isinstance(v, bool)]
    if len(blocks) >= MANY_BLOCK_GUESSES:
        values.update({n: SMALLER_BLOCK for n in blocks})
    return values
