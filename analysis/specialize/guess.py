"""The most likely value of a constexpr that no launch, pragma, config, heuristic or default shows.

Levels 3-4 still compile such a kernel, with a *labeled* guess: every value chosen here carries the provenance
marker `ASSUMED_TYPICAL`, and no level 3-4 finding that rests on it is shown (analysis/compiler/variants.py).
How the kernel body uses the name decides the kind of value:
- tested as a flag (`if HAS_BIAS:`, `not EVEN_K`) or named like one (`HAS_`, `IS_`, `USE_`, `EVEN_`): False;
- compared with strings (`ACTIVATION == "leaky_relu"`, `ACT in ("gelu", "relu")`), here or in a jit helper it is
  passed to: the first string it is compared with;
- compared for equality with ints (`LOSS_TYPE == 1`, a selector): the smallest such case, so a branch runs;
- passed as a keyword Triton takes a string for (`tl.dot(..., input_precision=P)`): a value it accepts; one it
  takes a bool for (`allow_tf32=ALLOW_TF32`): a flag;
- used as a dtype (`x.to(OUT_DTYPE)`, `dtype=ACC_TYPE`, `tl.zeros(shape, ACC)`, `OUT == tl.float16`, here or in a
  helper) or named like one (`DTYPE`, `_TYPE`): tl.float32;
- a bit width (`W_nbits`): 8;
- an int otherwise: the group size of grouped orderings is 8, stage counts 2, warps 4, split counts (SPLIT_K,
  NUM_SPLITS) 4; a block dimension
  (a `tl.arange`/`tl.zeros`/`reshape` shape, or named BLOCK/TILE/SIZE/DIM) 64, a power of two every tutorial
  shape fits; any other int (a problem size such as K or N_COLS) 1024, a multiple of every usual block size.
Pure: AST in, values out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

ASSUMED_TYPICAL = "assumed: a typical value (nothing shows this constexpr's value)"
_FLAG_NAME = re.compile(r"^(HAS|IS|USE|EVEN|ENABLE|WITH|DO|APPLY|NEED|SHOULD)_|_(ENABLED|FLAG)$", re.I)
_SHAPE_CALLS = frozenset({"arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr"})
_BLOCK_NAME = re.compile(r"BLOCK|TILE|SIZE|DIM|WIDTH|_B[MNK]?$|^B[MNKHD]$", re.I)
_DTYPE_NAME = re.compile(r"(^|_)(DTYPE|TYPE|DT)$", re.I)
_BITS_NAME = re.compile(r"(^|_)N?BITS$|^NBITS|_nbits$", re.I)
_SPLIT_NAME = re.compile(r"(^|_)SPLITS?(_?K)?($|_)", re.I)
_DTYPE_POSITION = {"zeros": 1, "full": 2, "empty": 1}
# Keywords of tl calls that take a string: a name passed there is one, guessed as a value every target accepts.
_STRING_KEYWORDS = {
    "input_precision": "ieee",
    "eviction_policy": "",
    "cache_modifier": "",
    "padding_option": "zero",
    "fp_downcast_rounding": "rtne",
    "sem": "acq_rel",
    "scope": "gpu",
}
# Keywords of tl calls that take a bool (`tl.dot(..., allow_tf32=ALLOW_TF32)`): a name passed there is a flag.
_FLAG_KEYWORDS = frozenset({"allow_tf32", "return_indices", "keep_dims", "reverse", "can_reorder",
                            "sanitize_overflow"})
_DTYPES = frozenset({"float8e4nv", "float8e5", "float8e4b15", "float16", "bfloat16", "float32", "float64", "int1",
                     "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float8e4b8",
                     "float8e5b16"})


def _uses(node: ast.AST, name: str) -> dict[str, Any]:
    """How the function body uses `name`: flags, compared strings, dtype positions."""
    found: dict[str, Any] = {
        "flag": False,
        "strings": [],
        "cases": [],
        "dtype": False,
        "shape": False,
        "unrolled": False,
        "passed": [],  # (callee name, position, keyword): where the name is an argument of a call
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
                # `ACT == "gelu"`, `ACT in ("gelu", "relu")`: a string; `OUT == tl.float16`: a dtype
                listed = [e for x in sides if isinstance(x, (ast.Tuple, ast.List, ast.Set)) for e in x.elts]
                found["strings"] += [
                    x.value for x in (*sides, *listed) if isinstance(x, ast.Constant) and isinstance(x.value, str)
                ]
                if any(_is_dtype(x) for x in (*sides, *listed)):
                    found["dtype"] = True
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
            found["strings"] += [_STRING_KEYWORDS[kw.arg] for kw in sub.keywords
                                 if kw.arg in _STRING_KEYWORDS and is_name(kw.value)]
            if any(kw.arg in _FLAG_KEYWORDS and is_name(kw.value) for kw in sub.keywords):
                found["flag"] = True
            at = _DTYPE_POSITION.get(name_of)  # `tl.zeros(shape, ACC)`, `tl.full(shape, 0, OUT)`
            if at is not None and len(sub.args) > at and is_name(sub.args[at]):
                found["dtype"] = True
            callee = func.id if isinstance(func, ast.Name) else None
            for i, a in enumerate(sub.args):
                if is_name(a):
                    found["passed"].append((callee, i, None))
            found["passed"] += [(callee, None, kw.arg) for kw in sub.keywords if kw.arg and is_name(kw.value)]
    return found


def _is_dtype(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in _DTYPES


def _helper_kind(
    uses: dict[str, Any], helpers: Mapping[str, ast.FunctionDef], depth: int
) -> tuple[str, Any] | None:
    """("string", first compared string) or ("dtype", None) when a jit helper the name is passed to uses its
    parameter so (`_activate(x, ACTIVATION)` where `_activate` compares ACTIVATION with strings)."""
    for callee, position, keyword in uses["passed"]:
        helper = helpers.get(callee or "")
        if helper is None or depth > 2:
            continue
        params = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
        param = keyword if keyword in params else params[position] if position is not None and position < len(params) else None
        if param is None:
            continue
        inner = _uses(helper, param)
        if inner["strings"]:
            return "string", inner["strings"][0]
        if inner["dtype"]:
            return "dtype", None
        deeper = _helper_kind(inner, helpers, depth + 1)
        if deeper:
            return deeper
    return None


def typical_value(
    function: ast.FunctionDef, name: str, helpers: Mapping[str, ast.FunctionDef] | None = None
) -> Any:
    """A labeled guess for constexpr `name` of `function` (see the module docstring); `helpers` are the module's
    functions, read where the name is passed to one (a string or dtype there is never guessed an int)."""
    uses = _uses(function, name)
    kind = _helper_kind(uses, helpers or {}, 0) if not (uses["strings"] or uses["dtype"]) else None
    if kind is not None and kind[0] == "string":
        uses["strings"] = [kind[1]]
    elif kind is not None:
        uses["dtype"] = True
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
    if _SPLIT_NAME.search(name) and not _BLOCK_NAME.search(name):
        return 4  # a count of slices (SPLIT_K, NUM_SPLITS): a few, never a problem size
    if "WARPS" in upper:
        return 4
    if _BITS_NAME.search(name):
        return 8  # a bit width (`W_nbits`): 32 // bits elements per packed int32, never a problem size
    if uses["unrolled"]:
        return 4  # a fully unrolled loop count: small, so a guess never makes a huge compile
    if uses["shape"] or _BLOCK_NAME.search(name):
        return 64  # a block dimension: a power of two every tutorial shape fits
    return 1024  # a problem size (K, N_COLS, SEQ_LEN): a multiple of every usual block size


# Past this many guessed block dimensions, each is guessed smaller: their tiles multiply (a 64x64x64 tile
# of guesses made one public kernel's compile take minutes), and no launch showed the real sizes anyway.
MANY_BLOCK_GUESSES = 3
SMALLER_BLOCK = 32


def typical_values(
    function: ast.FunctionDef, names: list[str], helpers: Mapping[str, ast.FunctionDef] | None = None
) -> dict[str, Any]:
    """typical_value of each of `names` (constexprs guessed together for one compile), block dimensions made
    smaller when many are guessed at once."""
    values = {name: typical_value(function, name, helpers) for name in names}
    blocks = [n for n, v in values.items() if v == 64 and not isinstance(v, bool)]
    if len(blocks) >= MANY_BLOCK_GUESSES:
        values.update({n: SMALLER_BLOCK for n in blocks})
    return values
