"""What a launch site `kernel[grid](args...)` tells about each argument: a literal value, a tensor's dtype,
or just "an int" / "a float", resolved through the simple assignments of the launching function.

`x = torch.empty(n, dtype=torch.float16)` then `add_kernel[grid](x, ...)` makes the first argument `*fp16`;
`BLOCK = 1024` then `BLOCK_SIZE=BLOCK` gives the constexpr 1024; `n = x.numel()` gives "an i32 of unknown value".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any

from ..source.safe_eval import NOT_NONE, UNKNOWN, apply_helper, call_name, dotted_name, evaluate
from .autograd import HOME_SCOPE, SET_WHERE
from .scope import Scope
from .torch_layers import layer_attribute, layer_parameter
from .torch_spellings import (
    CAST_METHODS,
    INT_METHODS,
    LIKE_FACTORIES,
    MATMUL_FUNCTIONS,
    NEW_METHODS,
    PERMUTE_METHODS,
    SAME_DTYPE_METHODS,
    SAME_LAYOUT_METHODS,
    SHAPED_FACTORIES,
    TENSOR_FACTORIES,
    TORCH_MODULES,
    is_shape_of,
    product,
    torch_dtype,
)

FP32_LIMITS: dict[str, float] = {
    "eps": 2.0**-23, "tiny": 2.0**-126, "smallest_normal": 2.0**-126, "resolution": 1e-6,
    "max": 3.4028234663852886e38, "min": -3.4028234663852886e38,
}  # `torch.finfo(d).<attr>` with d not visible: fp32's, the likeliest dtype of such a scalar's use


@dataclass(frozen=True)
class ArgFact:
    kind: str  # "value" | "tensor" | "int" | "float" | "unknown"
    value: Any = None
    dtype: str | None = None  # tensors: Triton element type, None when not visible
    reason: str = ""
    shape: tuple[Any, ...] | None = None  # tensors: dims (int or None) when the rank is known
    # tensors: element strides where they are not the contiguous ones of `shape` (a transposed view), else None;
    # `contiguous` False: a view whose strides are not visible (no stride of it is assumed)
    strides: tuple[Any, ...] | None = None
    contiguous: bool = True
    # values the launch shows it to be one of, the first the likeliest (a conditional of literals, fp32's
    # `finfo(d).eps`): a guess takes them, never a fact
    likely: tuple[Any, ...] = ()
    # ints: the least and greatest value the launch can pass (`max(128, min(n, 2048))`: 128 and 2048), None
    # where it shows none; a guess stays within them, never a fact
    bounds: tuple[int | None, int | None] = (None, None)


UNKNOWN_FACT = ArgFact("unknown")
# the branch of an `if` whose test nothing decides, taken for every name bound under it (variants.py names it)
BRANCH_GUESS = "assumed: the branch bound last of an `if` whose test is not known"
OUTER_STRIDE = "an outer dimension's stride"  # a visible `.stride(d)` that is not the innermost one
# How far a name is followed: through assignments, up MAX_CALL_LEVELS callers (scope.py) and into get_inputs(),
# where `ROWS = min(64, 2048 // next_power_of_2(h * w))` with `h, w` of an input's shape is ~20 steps deep. A
# literal looked up inside an expression costs 4 (the evaluator's names nest); both bounds keep cycles finite.
MAX_DEPTH = 24
MAX_ENV_DEPTH = 16
MATH_INTS = frozenset({"ceil", "floor", "trunc", "gcd", "lcm", "comb", "perm", "isqrt", "factorial", "prod"})


def resolve(expr: ast.expr, scope: Scope, depth: int = 0) -> ArgFact:
    """What the launch passes: follows names through assignments (bounded), never evaluates user code."""
    if depth > MAX_DEPTH:
        return UNKNOWN_FACT
    home = _home(expr, scope)
    if home is not scope:  # `ctx.tile` in backward: forward's value, read where forward set it
        fact = resolve(expr, home, depth + 1)
        return fact if fact.kind == "unknown" else replace(fact, reason=f"{getattr(expr, SET_WHERE)}: {fact.reason}")
    line = getattr(expr, "lineno", 0)
    fallback = getattr(expr, "branch_fallback", None)
    if isinstance(expr, ast.IfExp):  # `a if x.dtype == torch.float32 else b`, or a name bound in both branches
        decided = _condition(expr.test, scope, depth + 1)
        if decided is not None:
            return resolve(expr.body if decided else expr.orelse, scope, depth + 1)
        body, orelse = resolve(expr.body, scope, depth + 1), resolve(expr.orelse, scope, depth + 1)
        if _same(body, orelse):
            return body
        if fallback is None:  # an inline conditional: a choice of literals, or nothing known
            return _choice(body, orelse, line) or UNKNOWN_FACT
        # every name bound under this `if` resolves on the same branch; which one runs is a guess, named as one
        taken = orelse if fallback is expr.orelse else body
        return replace(taken, reason=f"{BRANCH_GUESS} at line {line}; {taken.reason}".rstrip("; "))
    # a name (or a bound attribute, `ctx.tile`) is followed below, so its reason says where its value came from
    named = isinstance(expr, ast.Name) or isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
    value = UNKNOWN if named else evaluate(expr, _constant_env(scope, depth))
    if value is not UNKNOWN and not _holds_tensor(value):
        stated = getattr(expr, "asserted_at", None)  # a literal that an `assert name == literal` stands for
        return ArgFact("value", value=value, reason=f"asserted at line {stated}" if stated else f"value at line {line}")
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id, prior=getattr(expr, "prior", False))
        if found is None:
            return UNKNOWN_FACT
        kind, target = found
        if kind == "param":
            return _param_fact(target, scope, depth)
        return resolve(target, scope, depth + 1)
    if isinstance(expr, ast.Call):
        return _call_fact(expr, scope, depth)
    if isinstance(expr, ast.Subscript):
        entry = _layer_entry(expr, scope)  # `self.conv.dilation[0]`
        if entry is not None:
            return resolve(entry[0], entry[1], depth + 1)
        if isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
            owner = resolve(expr.value.value, scope, depth + 1)
            dim = _dim(owner, evaluate(expr.slice, {}))
            if dim is not None:
                return ArgFact("value", value=dim, reason=f"a tensor dimension at line {line}")
            return ArgFact("int", reason=f"a tensor dimension at line {line}")
        entries = _dict_entries(expr, scope, depth)
        if entries is not None:
            return entries
        base = resolve(expr.value, scope, depth + 1)
        if base.kind == "tensor":
            return ArgFact("tensor", dtype=base.dtype, reason=base.reason)  # a view: layout no longer known
        return UNKNOWN_FACT
    info = _numeric_limit(expr)
    if info is not None:  # `torch.finfo(q.dtype).min`: a Python float, whatever the dtype
        likely = (FP32_LIMITS[expr.attr],) if info == "float" else ()  # type: ignore[attr-defined]
        how = f"a numeric limit at line {line}" + (", its value taken for fp32" if likely else "")
        return ArgFact(info, reason=how, likely=likely)
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        base = resolve(expr.value, scope, depth + 1)
        if base.kind != "tensor":
            return base
        rank = len(base.shape) if base.shape is not None else None
        if expr.attr == "mT":
            order = None if rank is None or rank < 2 else (*range(rank - 2), rank - 1, rank - 2)
        else:
            order = None if rank is None else tuple(reversed(range(rank)))
        return _permuted(base, order, f".{expr.attr} at line {line}")
    if isinstance(expr, ast.Attribute) and expr.attr in ("weight", "bias"):  # `self.conv.weight` of an nn layer
        layer = _layer_expr(expr.value, scope)
        param = layer_parameter(layer, expr.attr) if layer is not None else None
        if param is not None:
            home = _home(layer, scope)  # `nn.Conv2d(c_in, ...)` set in __init__: its names are read there
            dims = [resolve(d, home, depth + 1) for d in param.dims]
            shape = tuple(f.value if f.kind == "value" and type(f.value) is int else None for f in dims)
            return ArgFact("tensor", dtype=param.dtype, reason=f"nn.{param.layer}'s {expr.attr} at line {line}",
                           shape=shape)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):  # `self.w`, `ctx.tile`
        found = scope.lookup(f"{expr.value.id}.{expr.attr}")
        return resolve(found[1], scope, depth + 1) if found and found[0] == "expr" else UNKNOWN_FACT
    if isinstance(expr, ast.BinOp):
        left, right = resolve(expr.left, scope, depth + 1), resolve(expr.right, scope, depth + 1)
        kinds = {left.kind, right.kind}
        if kinds == {"tensor"}:  # `x @ w`, `x + bias`: a new contiguous tensor
            return _tensor_op(expr.op, left, right, line)
        scaled = left if left.kind == "tensor" else right
        if kinds in ({"tensor", "value"}, {"tensor", "int"}, {"tensor", "float"}) and (scaled.dtype or "")[:2] in (
            "fp", "bf"
        ):  # a float tensor scaled or shifted by a scalar keeps its dtype and shape
            return ArgFact("tensor", dtype=scaled.dtype, reason=scaled.reason, shape=scaled.shape)
        if "tensor" in kinds:
            return UNKNOWN_FACT
        floats = [f for f in (left, right) if f.kind == "float" or (f.kind == "value" and type(f.value) is float)]
        if kinds <= {"int", "value", "float"} and (floats or isinstance(expr.op, ast.Div)):
            return ArgFact("float", reason=f"float arithmetic at line {line}")  # `1.0 / n`: a Python float
        if kinds <= {"int", "value"}:
            return ArgFact("int", reason=f"integer arithmetic at line {line}")
    return UNKNOWN_FACT


class _ConstantEnv(dict):
    """Literal values of names in scope, looked up lazily by evaluate(); bounded by depth to stay cheap."""

    def __init__(self, scope: Scope, depth: int) -> None:
        super().__init__()
        self.scope = scope
        self.depth = depth

    def get(self, key: str, default: Any = UNKNOWN) -> Any:  # type: ignore[override]
        found = self.scope.lookup(key)
        if found is None or self.depth > MAX_ENV_DEPTH:
            return default
        if found[0] == "param":  # what the callers pass (or the default): `if bias is None:` reads it
            fact = _param_fact(found[1], self.scope, self.depth + 4)
        else:
            fact = resolve(found[1], self.scope, self.depth + 4)
        if fact.kind == "tensor":
            return NOT_NONE
        if BRANCH_GUESS in fact.reason:  # one branch of an undecided `if`: a guess, never a value to compute with
            return default
        return fact.value if fact.kind == "value" else default


_SCALARS = (bool, int, float, str)


def _choice(body: ArgFact, orelse: ArgFact, line: int) -> ArgFact | None:
    """`"tf32" if fast else "ieee"`: literals of one type, none decided: "a str/int/float that is one of them".
    `1024 if d <= 1024 else next_power_of_2(d)`: one branch a literal, the other an int the code does not show:
    an int whose one shown candidate is the literal."""
    known = [f for f in (body, orelse) if f.kind == "value" or f.likely]
    if len(known) == 1:
        (shown,), other = known, orelse if known[0] is body else body
        values = list(shown.likely or (shown.value,))
        if other.kind == "int" and not other.likely and all(type(v) is int for v in values):
            return ArgFact("int", reason=f"a conditional at line {line}, the other branch not shown",
                           likely=tuple(dict.fromkeys(values)))
        return None
    values = [*(body.likely or (body.value,)), *(orelse.likely or (orelse.value,))]
    if len(known) != 2:
        return None
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or not kinds <= set(_SCALARS):
        return None
    kind = {int: "int", float: "float"}.get(next(iter(kinds)), "choice")
    return ArgFact(kind, reason=f"a conditional at line {line}", likely=tuple(dict.fromkeys(values)))


def _dict_entries(expr: ast.Subscript, scope: Scope, depth: int) -> ArgFact | None:
    """`configs[x.dtype]["BLOCK_M"]` over a dict literal bound in scope: the entries every key the launch cannot
    decide could select. One value across them is what the launch passes (any other key raises before it);
    several literals of one type are a choice, the first entry's the likeliest; anything else: None."""
    keys: list[ast.expr] = []
    node: ast.expr = expr
    while isinstance(node, ast.Subscript):
        keys.append(node.slice)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    found = scope.lookup(node.id)
    if found is None or found[0] != "expr" or not isinstance(found[1], ast.Dict):
        return None
    env = _constant_env(scope, depth + 1)
    level: list[ast.expr] = [found[1]]
    for key in reversed(keys):
        wanted = evaluate(key, env)
        below: list[ast.expr] = []
        for table in level:
            if not isinstance(table, ast.Dict) or any(k is None for k in table.keys):
                return None  # `**other` inside: entries not all visible
            named = [evaluate(k, {}) for k in table.keys]  # type: ignore[arg-type]
            if wanted is not UNKNOWN and wanted in named:
                below.append(table.values[named.index(wanted)])
            elif wanted is UNKNOWN or UNKNOWN in named:
                below.extend(table.values)  # a key the launch does not show: any entry could be the one
        level = below
    values = [evaluate(v, env) for v in level]
    if not values or any(v is UNKNOWN or type(v) not in _SCALARS for v in values) or len({type(v) for v in values}) > 1:
        return None
    line = getattr(expr, "lineno", 0)
    distinct = tuple(dict.fromkeys(values))
    if len(distinct) == 1:
        return ArgFact("value", value=distinct[0], reason=f"a dict literal's entry at line {line}")
    kind = {int: "int", float: "float"}.get(type(distinct[0]), "choice")
    return ArgFact(kind, reason=f"a dict literal's entries at line {line}", likely=distinct)


def _home(expr: ast.expr, scope: Scope) -> Scope:
    """The scope `expr` is read in: its own (a ctx attribute forward set: autograd.py), else `scope`."""
    return getattr(expr, HOME_SCOPE, None) or scope


def _holds_tensor(value: Any) -> bool:
    """A value the evaluator built around a tensor's stand-in (NOT_NONE): not a literal."""
    return value is NOT_NONE or (isinstance(value, tuple) and any(_holds_tensor(v) for v in value))


def _constant_env(scope: Scope, depth: int) -> dict[str, Any]:
    return _ConstantEnv(scope, depth)


def _numeric_limit(expr: ast.expr) -> str | None:
    """"float" for `torch.finfo(d).min` (max, eps, tiny, ...), "int" for `torch.iinfo(d).max`; else None."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Call)):
        return None
    func = expr.value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name == "finfo" and expr.attr in ("min", "max", "eps", "tiny", "smallest_normal", "resolution"):
        return "float"
    if name == "iinfo" and expr.attr in ("min", "max"):
        return "int"
    return None


def _param_fact(arg: ast.arg, scope: Scope, depth: int) -> ArgFact:
    """A parameter of the launching function: what its callers in this module pass, else its annotation."""
    default = scope.defaults.get(arg.arg)
    for call, caller_scope in scope.callers:
        passed = _passed(call, arg.arg, scope.param_order)
        if passed is None:
            if default is not None and not _has_splat(call):
                fact = resolve(default, scope, depth + 1)  # not passed: the default applies
                if fact.kind == "value":
                    return replace(fact, reason=f"default of {arg.arg} (not passed at line {call.lineno})")
            continue
        fact = resolve(passed, caller_scope, depth + 1)
        if fact.kind != "unknown":
            return replace(fact, reason=f"{fact.reason} (passed as {arg.arg} at line {call.lineno})")
    if default is not None and not scope.callers:
        fact = resolve(default, scope, depth + 1)
        if fact.kind == "value":
            return replace(
                fact, reason=f"default of parameter {arg.arg} (no call of the wrapper in this file)"
            )
    if isinstance(default, ast.Constant) and type(default.value) is float:  # callers pass it, values not seen
        return ArgFact("float", reason=f"float default of parameter {arg.arg}", likely=(default.value,))
    ann = arg.annotation
    text = ast.unparse(ann) if ann is not None else ""
    if "Tensor" in text:
        return ArgFact("tensor", reason=f"tensor parameter {arg.arg} (dtype not visible)")
    if text == "int":
        return ArgFact("int", reason=f"int parameter {arg.arg}")
    if text == "float":
        return ArgFact("float", reason=f"float parameter {arg.arg}")
    return UNKNOWN_FACT


def _has_splat(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)


def _passed(call: ast.Call, name: str, order: list[str]) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    index = order.index(name) if name in order else -1
    if 0 <= index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None


def _call_fact(call: ast.Call, scope: Scope, depth: int) -> ArgFact:
    name = call_name(call.func)
    line = call.lineno
    dtype_kw = next((kw.value for kw in call.keywords if kw.arg == "dtype"), None)
    explicit = _dtype_of(dtype_kw, scope, depth)
    # `dtype=x.dtype` of an x not visible: not torch's default (only `dtype=None` is)
    hidden = explicit is None and dtype_kw is not None and not (isinstance(dtype_kw, ast.Constant) and
                                                                dtype_kw.value is None)
    module = dotted_name(call.func.value) if isinstance(call.func, ast.Attribute) else None
    if module == "math":  # `math.sqrt(d)`: a Python scalar (a tensor scaled by it keeps its dtype)
        kind = "int" if name in MATH_INTS else "float"
        return ArgFact(kind, reason=f"math.{name}() at line {line}")
    is_method = isinstance(call.func, ast.Attribute) and module not in TORCH_MODULES
    if module in TORCH_MODULES:
        operands = call.args[:2]
    else:  # `a.matmul(b)`, `a.mm(b)`
        operands = [call.func.value, call.args[0]] if is_method and name != "linear" and len(call.args) == 1 else []
    if name in MATMUL_FUNCTIONS and len(operands) == 2:
        a, b = resolve(operands[0], scope, depth + 1), resolve(operands[1], scope, depth + 1)
        if a.kind == b.kind == "tensor":
            if name == "linear":  # x @ w.T (+ b)
                b = replace(b, shape=b.shape[::-1] if b.shape is not None and len(b.shape) == 2 else None)
            how = f".{name}()" if is_method else f"{module}.{name}"
            return replace(_tensor_op(ast.MatMult(), a, b, line), reason=f"{how} at line {line}")
    if not is_method and name in TENSOR_FACTORIES:
        dtype = None if hidden else explicit or TENSOR_FACTORIES[name]
        how = "dtype" if explicit else f"dtype={ast.unparse(dtype_kw)}, not visible" if hidden else \
            "torch's default dtype"
        shape = _factory_shape(name, call, scope, depth)
        return ArgFact(
            "tensor", dtype=dtype, reason=f"torch.{name} at line {line} ({how} {dtype})", shape=shape
        )
    if not is_method and name in LIKE_FACTORIES and call.args:
        src = resolve(call.args[0], scope, depth + 1)
        if explicit:
            return ArgFact("tensor", dtype=explicit, reason=f"torch.{name} at line {line}", shape=src.shape)
        reason = f"torch.{name} at line {line} ({src.reason or 'like'})"
        return ArgFact("tensor", dtype=src.dtype, reason=reason, shape=src.shape)
    if is_method:
        assert isinstance(call.func, ast.Attribute)
        owner = call.func.value
        cast = (_dtype_of(call.args[0], scope, depth) if call.args else None) or explicit if name == "to" else None
        if cast:  # a dtype cast keeps the shape (and makes a contiguous tensor of a contiguous one)
            base = resolve(owner, scope, depth + 1)
            shape = base.shape if base.kind == "tensor" else None
            return ArgFact("tensor", dtype=cast, reason=f".to() at line {line}", shape=shape)
        target = call.args[0].id if call.args and isinstance(call.args[0], ast.Name) else None
        bound = scope.lookup(target) if target else ("", None)
        if name == "to" and (bound is None or bound[0] == "param" and "dev" not in target.lower()):
            # `.to(dtype)` with a name bound nowhere in sight, or an argument nothing shows (`.to(device)` keeps the
            # dtype): a dtype or a device, not known
            base = resolve(owner, scope, depth + 1)
            return ArgFact("tensor", dtype=None, reason=f".to({call.args[0].id}) at line {line}, {call.args[0].id} "
                           "not visible", shape=base.shape if base.kind == "tensor" else None)
        if name in CAST_METHODS and not call.args:
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return ArgFact("tensor", dtype=CAST_METHODS[name], reason=f".{name}() at line {line}",
                               shape=base.shape)
        if name in NEW_METHODS:
            base = resolve(owner, scope, depth + 1)
            shape = _shape_args(call.args[:1], scope, depth) if name != "new_tensor" else None
            if explicit:
                return ArgFact("tensor", dtype=explicit, reason=f".{name}() at line {line}", shape=shape)
            if base.kind in ("tensor", "unknown"):
                reason = f".{name}() at line {line}" + (f" ({base.reason})" if base.reason else "")
                return ArgFact("tensor", dtype=base.dtype, reason=reason, shape=shape)
        if name in PERMUTE_METHODS:
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return _permuted(base, _permutation(name, call, base), f".{name}() at line {line}")
        if name == "contiguous":
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return replace(base, strides=None, contiguous=True)
        if name == "expand":
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":  # broadcast dims have stride 0
                return ArgFact("tensor", dtype=base.dtype, reason=f".expand() at line {line}", contiguous=False)
        if name in SAME_LAYOUT_METHODS or name == "to":
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return base
        if name in SAME_DTYPE_METHODS:
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return ArgFact(
                    "tensor", dtype=base.dtype, reason=base.reason
                )  # layout changed: shape unknown
        if name in INT_METHODS:
            return _int_method(name, owner, call, scope, depth, line)
    if name in ("cdiv", "next_power_of_2", "min", "max", "int") and call.args and not call.keywords:
        # `next_power_of_2(x.shape[1])` at the launch: the evaluator sees a tensor, its dims are facts here
        facts = [resolve(a, scope, depth + 1) for a in call.args]
        value = apply_helper(name, [f.value for f in facts]) if all(f.kind == "value" for f in facts) else UNKNOWN
        if value is not UNKNOWN:
            return ArgFact("value", value=value, reason=f"{name}() of known values at line {line}")
    if name in ("min", "max", "next_power_of_2", "int") and call.args and not call.keywords:
        bounded = _bounded(name, [resolve(a, scope, depth + 1) for a in call.args], line)
        if bounded is not None:
            return bounded
    if name in ("cdiv", "next_power_of_2", "len", "int"):
        return ArgFact("int", reason=f"{name}() at line {line}")
    if name == "float":
        return ArgFact("float", reason=f"float() at line {line}")
    return UNKNOWN_FACT


def _layer_entry(expr: ast.Subscript, scope: Scope) -> tuple[ast.expr, Scope] | None:
    """`self.conv.dilation[0]` of a layer built in sight: the constructor's expression for that entry, with the scope
    it is read in."""
    owner = expr.value
    index = expr.slice.value if isinstance(expr.slice, ast.Constant) else None
    if not isinstance(owner, ast.Attribute) or type(index) is not int:
        return None
    layer = _layer_expr(owner.value, scope)
    entries = layer_attribute(layer, owner.attr) if layer is not None else None
    if not isinstance(entries, tuple) or not -len(entries) <= index < len(entries):
        return None
    return entries[index], _home(layer, scope)


def _layer_expr(owner: ast.expr, scope: Scope) -> ast.expr | None:
    """The constructor call a layer attribute (`self.conv`) or name (`conv`) is bound to, if visible."""
    key = f"{owner.value.id}.{owner.attr}" if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) \
        else owner.id if isinstance(owner, ast.Name) else None
    found = scope.lookup(key) if key else None
    return found[1] if found and found[0] == "expr" else None


def _bounded(name: str, facts: list[ArgFact], line: int) -> ArgFact | None:
    """`max(128, min(next_power_of_2(n), 2048))` with `n` not visible: an int between 128 and 2048. None where no
    argument shows a bound (or one is not an int)."""
    ends: list[tuple[int | None, int | None]] = []
    for fact in facts:
        if fact.kind == "value" and type(fact.value) is int:
            ends.append((fact.value, fact.value))
        elif fact.kind in ("int", "unknown"):  # a wrapper parameter nothing shows: no bound of its own
            ends.append(fact.bounds)
        else:
            return None
    lows, highs = [lo for lo, _ in ends], [hi for _, hi in ends]
    if name == "max":  # at least the greatest known low; at most the greatest high, if every argument has one
        low = max((v for v in lows if v is not None), default=None)
        high = None if None in highs else max(highs)
    elif name == "min":
        low = None if None in lows else min(lows)
        high = min((v for v in highs if v is not None), default=None)
    elif len(ends) == 1:  # next_power_of_2 and int() keep the order of values
        low, high = ends[0]
        if name == "next_power_of_2":
            low, high = (None if v is None else apply_helper(name, [v]) for v in (low, high))
    else:
        return None
    if low is None and high is None:
        return None
    return ArgFact("int", reason=f"{name}() at line {line}", bounds=(low, high))


def _tensor_op(op: ast.operator, left: ArgFact, right: ArgFact, line: int) -> ArgFact:
    """The result of an operator over two tensors: matmul or broadcast shape (None where not visible), the dtype
    both share (mixed dtypes promote: not modelled, so not visible)."""
    dtype = left.dtype if left.dtype == right.dtype else None
    if isinstance(op, ast.MatMult):
        shape = _matmul_shape(left.shape, right.shape)
        how = "@"
    else:
        shape = _broadcast_shape(left.shape, right.shape)
        how = "an elementwise operator"
    return ArgFact("tensor", dtype=dtype, reason=f"{how} of two tensors at line {line}", shape=shape)


def _matmul_shape(a: tuple[Any, ...] | None, b: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """torch.matmul's result shape: vector cases dropped, batch dims broadcast."""
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return (*b[:-2], b[-1])
    batch = _broadcast_shape(a[:-2], b[:-2])
    return None if batch is None else (*batch, a[-2], b[-1])


def _broadcast_shape(a: tuple[Any, ...] | None, b: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    if a is None or b is None:
        return None
    out: list[Any] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1 or y == 1:
            out.append(y if x == 1 else x)
        elif x is None or y is None:
            out.append(x if y is None else y)  # the known one: broadcasting needs them equal unless one is 1
        elif x == y:
            out.append(x)
        else:
            return None  # not broadcastable as read: the shapes are not what they seem
    return tuple(reversed(out))


def _same(a: ArgFact, b: ArgFact) -> bool:
    """Two branches that give the same known fact (the test need not be decided)."""
    return a.kind != "unknown" and (a.kind, a.dtype, a.shape, a.value) == (b.kind, b.dtype, b.shape, b.value)


def _condition(test: ast.expr, scope: Scope, depth: int) -> bool | None:
    """A test decided by what is known: constants, or a dtype compared with a dtype (`x.dtype == torch.float32`,
    `x.dtype is not y.dtype`); None when it is not decided (nothing is assumed)."""
    value = evaluate(test, _constant_env(scope, depth))
    if value is not UNKNOWN and not _holds_tensor(value):
        return bool(value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _condition(test.operand, scope, depth + 1)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot))):
        return None
    left, right = _dtype_of(test.left, scope, depth + 1), _dtype_of(test.comparators[0], scope, depth + 1)
    if not left or not right:
        return None
    return (left == right) != isinstance(test.ops[0], (ast.NotEq, ast.IsNot))


def _dtype_of(expr: ast.expr | None, scope: Scope, depth: int) -> str | None:
    """Triton element type of a dtype expression: `torch.float16`, `x.dtype`, a name bound to either, or (as
    `.to(y)` takes it) a tensor; None when not visible."""
    if expr is None or depth > MAX_DEPTH:
        return None
    literal = torch_dtype(expr)
    if literal or isinstance(expr, ast.Constant):
        return literal
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):  # `ctx.dtype = x.dtype` kept
        found = scope.lookup(f"{expr.value.id}.{expr.attr}")
        if found is not None and found[0] == "expr":
            return _dtype_of(found[1], _home(found[1], scope), depth + 1)
    if isinstance(expr, ast.Attribute) and expr.attr == "dtype":
        owner = resolve(expr.value, scope, depth + 1)
        return owner.dtype if owner.kind == "tensor" else None
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id)
        bound = _dtype_of(found[1], _home(found[1], scope), depth + 1) if found is not None and found[0] == "expr" \
            else None
        if bound:  # `dt = x.dtype` then `dtype=dt`
            return bound
        fact = resolve(expr, scope, depth + 1)  # a tensor: `.to(y)` takes y's dtype
        return fact.dtype if fact.kind == "tensor" else None
    return None


def _shape_args(args: list[ast.expr], scope: Scope, depth: int) -> tuple[Any, ...] | None:
    """Dims of `torch.empty(M, N)` / `torch.empty((M, N))`: ints where known, None where not."""
    found = scope.lookup(args[0].id) if len(args) == 1 and isinstance(args[0], ast.Name) else None
    if found is not None and found[0] == "expr" and isinstance(found[1], (ast.Tuple, ast.List)):
        args = [found[1]]  # `shape = (B, H, S, D)` then `torch.randn(shape)`
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    elif len(args) == 1 and is_shape_of(args[0]):
        # torch.empty(x.shape) / y.new_empty(x.size()): x's shape, if known
        owner = args[0].value if isinstance(args[0], ast.Attribute) else args[0].func.value  # type: ignore[union-attr]
        return resolve(owner, scope, depth + 1).shape
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    facts = [resolve(a, scope, depth + 1) for a in args]
    if len(args) == 1 and facts[0].kind == "value" and isinstance(facts[0].value, tuple):
        return tuple(d if isinstance(d, int) else None for d in facts[0].value)
    if len(args) == 1 and facts[0].kind not in ("int", "value"):
        return None  # `torch.randn(shape)` with `shape` not visible: a size tuple of any rank, not one dim
    return tuple(f.value if f.kind == "value" and isinstance(f.value, int) else None for f in facts)


def _factory_shape(name: str, call: ast.Call, scope: Scope, depth: int) -> tuple[Any, ...] | None:
    """Shape of a torch factory call when its size arguments can be read."""
    size = next((kw.value for kw in call.keywords if kw.arg == "size"), None)
    if size is not None:
        return _shape_args([size], scope, depth)
    if name in SHAPED_FACTORIES:
        return _shape_args(call.args, scope, depth)
    if name == "randint" and len(call.args) in (2, 3):
        return _shape_args([call.args[-1]], scope, depth)  # randint([low,] high, size)
    if name == "full" and call.args:
        return _shape_args([call.args[0]], scope, depth)
    if name == "arange" and 1 <= len(call.args) <= 2:
        bounds = [resolve(a, scope, depth + 1) for a in call.args]
        if all(b.kind == "value" and isinstance(b.value, int) for b in bounds):
            start, end = (0, bounds[0].value) if len(bounds) == 1 else (bounds[0].value, bounds[1].value)
            return (max(end - start, 0),)
        return (None,)
    return None


def _permutation(name: str, call: ast.Call, base: ArgFact) -> tuple[int, ...] | None:
    """The dim order of `x.t()`, `x.transpose(i, j)` or `x.permute(...)` over a base of known rank."""
    rank = len(base.shape) if base.shape is not None else None
    if rank is None or call.keywords:
        return None
    dims = [evaluate(a, {}) for a in call.args]
    if name == "permute" and len(dims) == 1 and isinstance(dims[0], tuple):
        dims = list(dims[0])
    if not all(isinstance(d, int) and -rank <= d < rank for d in dims):
        return None
    dims = [d % rank for d in dims]
    if name == "t":
        return (1, 0) if rank == 2 and not dims else (0,) if rank == 1 and not dims else None
    if name == "permute":
        return tuple(dims) if sorted(dims) == list(range(rank)) else None
    if len(dims) != 2:
        return None
    order = list(range(rank))
    order[dims[0]], order[dims[1]] = order[dims[1]], order[dims[0]]
    return tuple(order)


def _permuted(base: ArgFact, order: tuple[int, ...] | None, how: str) -> ArgFact:
    """A view with its dims in `order`: shape and strides permuted; order unknown: no stride of it is known."""
    if order is None or base.shape is None or not base.contiguous:
        return ArgFact("tensor", dtype=base.dtype, reason=f"{how}: a view, strides not visible", contiguous=False)
    strides = _strides(base)
    new_strides = tuple(strides[i] for i in order)
    plain = all(s is not None for s in new_strides) and new_strides == tuple(_contiguous(tuple(base.shape[i] for i in order)))
    return replace(base, shape=tuple(base.shape[i] for i in order), strides=None if plain else new_strides,
                   reason=f"{base.reason}; {how}")


def _contiguous(shape: tuple[Any, ...]) -> list[Any]:
    return [product(shape[i + 1:]) for i in range(len(shape))]


def _strides(fact: ArgFact) -> tuple[Any, ...]:
    """Element strides of a tensor of known shape (None where a dim they depend on is not known)."""
    assert fact.shape is not None
    return fact.strides if fact.strides is not None else tuple(_contiguous(fact.shape))


def _rank(owner: ast.expr, fact: ArgFact, scope: Scope) -> int | None:
    if fact.shape is not None:
        return len(fact.shape)
    return scope.unpacked_rank(owner.id) if isinstance(owner, ast.Name) else None


def _dim(fact: ArgFact, index: Any) -> int | None:
    if fact.shape is None or not isinstance(index, int) or not -len(fact.shape) <= index < len(fact.shape):
        return None
    dim = fact.shape[index]
    return dim if isinstance(dim, int) else None


def _int_method(name: str, owner: ast.expr, call: ast.Call, scope: Scope, depth: int, line: int) -> ArgFact:
    """`x.stride(d)`, `x.size(d)`, `x.numel()`: a value when the layout is known, else an int.

    Tensors are taken as contiguous (what torch allocates and what kernels are usually given), so the
    innermost stride is 1, which the JIT specializes to a constant."""
    fact = resolve(owner, scope, depth + 1)
    index = evaluate(call.args[0], {}) if call.args else None
    if fact.kind == "tensor" and name == "stride" and fact.strides is not None and isinstance(index, int):
        value = _dim(replace(fact, shape=fact.strides), index)
        if value is not None:
            return ArgFact("value", value=value, reason=f"stride of a {fact.shape} view at line {line} ({fact.reason})")
        return ArgFact("int", reason=f".stride() of a view at line {line}")
    if fact.kind == "tensor" and name == "stride" and not fact.contiguous:
        return ArgFact("int", reason=f".stride() at line {line} ({fact.reason})")
    if fact.kind in ("tensor", "unknown") and name == "stride" and isinstance(index, int):
        rank = _rank(owner, fact, scope)
        if rank is not None and index in (rank - 1, -1):
            return ArgFact(
                "value", value=1, reason=f"innermost stride at line {line}; tensor assumed contiguous"
            )
        if fact.shape is not None and 0 <= index < len(fact.shape):
            value = product(fact.shape[index + 1 :])
            if value is not None:
                return ArgFact(
                    "value", value=value, reason=f"stride of a contiguous {fact.shape} tensor at line {line}"
                )
        if rank is not None and 0 <= index < rank - 1:  # never taken for the innermost one by the name it is given
            return ArgFact("int", reason=f".stride({index}) at line {line}: {OUTER_STRIDE} of a rank-{rank} tensor")
    if fact.kind == "tensor" and name == "size" and isinstance(index, int):
        dim = _dim(fact, index)
        if dim is not None:
            return ArgFact("value", value=dim, reason=f"size at line {line}")
    if fact.kind == "tensor" and name == "numel" and fact.shape:
        value = product(fact.shape)
        if value is not None:
            return ArgFact("value", value=value, reason=f"numel of a {fact.shape} tensor at line {line}")
    return ArgFact("int", reason=f".{name}() at line {line}")
