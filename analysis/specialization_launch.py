"""What a launch site `kernel[grid](args...)` tells about each argument: a literal value, a tensor's dtype,
or just "an int" / "a float", resolved through the simple assignments of the launching function.

`x = torch.empty(n, dtype=torch.float16)` then `add_kernel[grid](x, ...)` makes the first argument `*fp16`;
`BLOCK = 1024` then `BLOCK_SIZE=BLOCK` gives the constexpr 1024; `n = x.numel()` gives "an i32 of unknown value".
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field, replace
from typing import Any

from .safe_eval import UNKNOWN, call_name, evaluate
from .specialization_kernelbench import init_attributes, kernelbench_callers

TORCH_DTYPES = {
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "int8": "i8",
    "int16": "i16",
    "short": "i16",
    "int32": "i32",
    "int": "i32",
    "int64": "i64",
    "long": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}
# torch factory -> dtype when no dtype= is given (torch's defaults)
TENSOR_FACTORIES = {
    "empty": "fp32",
    "zeros": "fp32",
    "ones": "fp32",
    "randn": "fp32",
    "rand": "fp32",
    "full": None,  # depends on the fill value
    "empty_strided": "fp32",
    "randint": "i64",
    "arange": None,
    "tensor": None,
    "randperm": "i64",
}
LIKE_FACTORIES = (
    "empty_like",
    "zeros_like",
    "ones_like",
    "randn_like",
    "rand_like",
    "full_like",
    "randint_like",
)
CAST_METHODS = {
    "half": "fp16",
    "float": "fp32",
    "double": "fp64",
    "bfloat16": "bf16",
    "int": "i32",
    "long": "i64",
}
SHAPED_FACTORIES = ("empty", "zeros", "ones", "randn", "rand")  # positional args are the dims
SAME_LAYOUT_METHODS = ("contiguous", "clone", "cuda", "npu", "detach")  # same dtype, shape and strides
SAME_DTYPE_METHODS = (
    "view",
    "reshape",
    "t",
    "transpose",
    "permute",
    "flatten",
    "clone",
    "cuda",
    "npu",
    "detach",
    "expand",
    "squeeze",
    "unsqueeze",
)
NEW_METHODS = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor")  # owner's dtype unless dtype=
MAX_CALLERS = 4
INT_METHODS = ("numel", "stride", "size", "item", "dim", "element_size")


@dataclass(frozen=True)
class ArgFact:
    kind: str  # "value" | "tensor" | "int" | "float" | "unknown"
    value: Any = None
    dtype: str | None = None  # tensors: Triton element type, None when not visible
    reason: str = ""
    shape: tuple[Any, ...] | None = None  # tensors: dims (int or None) when the rank is known; contiguous


UNKNOWN_FACT = ArgFact("unknown")


FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Launch:
    kernel: str
    line: int
    call: ast.Call
    scope: Scope
    grid: ast.expr | None = None


@dataclass
class Scope:
    """Names bound before a launch: the launching function's assignments and params, then module level."""

    bindings: dict[str, ast.expr] = field(default_factory=dict)
    params: dict[str, ast.arg] = field(default_factory=dict)
    outer: Scope | None = None
    # calls of the launching function in this module, each with the scope it runs in (one level up)
    callers: list[tuple[ast.Call, Scope]] = field(default_factory=list)
    param_order: list[str] = field(default_factory=list)
    defaults: dict[str, ast.expr] = field(default_factory=dict)  # the launching function's param defaults

    def unpacked_rank(self, name: str) -> int | None:
        """Rank of tensor `name` when the code unpacks its shape (`M, K = name.shape`)."""
        for value in self.bindings.values():
            n = getattr(value, "unpack_len", None)
            if n is not None and isinstance(value, ast.Subscript):
                owner = value.value
                if (
                    isinstance(owner, ast.Attribute)
                    and owner.attr == "shape"
                    and isinstance(owner.value, ast.Name)
                ):
                    if owner.value.id == name:
                        return int(n)
        return self.outer.unpacked_rank(name) if self.outer else None

    def lookup(self, name: str, prior: bool = False) -> tuple[str, Any] | None:
        """prior: the name as it was before this scope rebound it (`x = x.contiguous()` reads the parameter)."""
        if name in self.bindings and not prior:
            return "expr", self.bindings[name]
        if name in self.params:
            return "param", self.params[name]
        return self.outer.lookup(name) if self.outer else None


def _collect_bindings(body: list[ast.stmt], before_line: int, out: dict[str, ast.expr]) -> None:
    """Assignments that run before `before_line`, last one wins; descends into if/with/for/try blocks."""
    for stmt in body:
        if stmt.lineno >= before_line:
            break
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                _bind_target(target, stmt.value, out)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            out[stmt.target.id] = stmt.value
        elif isinstance(stmt, (ast.If, ast.With, ast.For, ast.While, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                _collect_bindings(getattr(stmt, block, []) or [], before_line, out)


class _Prior(ast.NodeTransformer):
    """`x = f(x)`: the `x` read on the right is the earlier binding (substituted), or the one outside this scope
    (a Name marked `prior`), never the new binding itself (which would resolve to itself forever)."""

    def __init__(self, name: str, earlier: ast.expr | None) -> None:
        self.name, self.earlier = name, earlier

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id != self.name:
            return node
        if self.earlier is not None:
            return self.earlier
        node.prior = True  # type: ignore[attr-defined]
        return node


def _bind_target(target: ast.expr, value: ast.expr, out: dict[str, ast.expr]) -> None:
    if isinstance(target, ast.Name):
        if any(isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(value)):
            value = _Prior(target.id, out.get(target.id)).visit(copy.deepcopy(value))
        out[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for t, v in zip(target.elts, value.elts, strict=True):
                _bind_target(t, v, out)
        else:
            # `M, K = a.shape`: each name is one element of `value`
            for i, t in enumerate(target.elts):
                item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                item.lineno = getattr(value, "lineno", 0)
                item.unpack_len = len(target.elts)  # type: ignore[attr-defined]  # `M, K = a.shape`: a is 2-D
                _bind_target(t, item, out)


def module_scope(tree: ast.Module) -> Scope:
    scope = Scope()
    _collect_bindings(tree.body, 10**9, scope.bindings)
    return scope


@dataclass
class CallIndex:
    """Every call of the module with its enclosing function, built in one pass and shared by all kernels."""

    tree: ast.Module
    top: Scope
    launches: dict[str, list[tuple[ast.Call, FuncNode | None]]]  # kernel name -> `kernel[grid](...)` calls
    calls: dict[str, list[tuple[ast.Call, FuncNode | None]]]  # function name -> plain `f(...)` calls


def index_calls(tree: ast.Module) -> CallIndex:
    launches: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    calls: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    stack: list[tuple[ast.AST, FuncNode | None]] = [(tree, None)]
    while stack:
        node, func = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child))
                continue
            if isinstance(child, ast.Call):
                name = _launched_name(child)
                if name is not None:
                    launches.setdefault(name, []).append((child, func))
                elif isinstance(child.func, ast.Name):
                    calls.setdefault(child.func.id, []).append((child, func))
            stack.append((child, func))
    return CallIndex(tree, module_scope(tree), launches, calls)


def find_launches(tree: ast.Module | CallIndex, kernel: str) -> list[Launch]:
    """Every `kernel[grid](...)` call in the module, with the scope it runs in."""
    index = tree if isinstance(tree, CallIndex) else index_calls(tree)
    out: list[Launch] = []
    for call, func in index.launches.get(kernel, []):
        scope = _scope_at(call, func, index.top, index.tree)
        if func is not None:
            for caller_call, caller in index.calls.get(func.name, [])[:MAX_CALLERS]:
                scope.callers.append((caller_call, _scope_at(caller_call, caller, index.top, index.tree)))
            for key, value in init_attributes(index.tree, func).items():  # `self.weight` set in __init__
                scope.bindings.setdefault(key, value)
            if not scope.callers:  # KernelBench: the harness calls ModelNew.forward(*get_inputs())
                scope.callers.extend(
                    kernelbench_callers(index.tree, func, lambda c, f: _scope_at(c, f, index.top, index.tree))
                )
        if isinstance(call.func, ast.Subscript):
            grid: ast.expr | None = call.func.slice
        else:  # kernel.warmup(..., grid=...): same arguments as a launch
            grid = next((kw.value for kw in call.keywords if kw.arg == "grid"), None)
        out.append(Launch(kernel, call.lineno, call, scope, grid=grid))
    return sorted(out, key=lambda launch: launch.line)


def _launched_name(call: ast.Call) -> str | None:
    """The kernel of `kernel[grid](...)`, or of `kernel.warmup(...)` (a compile with launch arguments)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "warmup" and isinstance(func.value, ast.Name):
        return func.value.id
    if not isinstance(func, ast.Subscript):
        return None
    target = func.value
    name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    return name if isinstance(name, str) else None


def _scope_at(call: ast.Call, func: FuncNode | None, top: Scope, tree: ast.Module) -> Scope:
    """Names bound where `call` runs: its function's params and earlier assignments, then module level."""
    if func is None:
        # Module level (e.g. under `if __name__ == "__main__":`): only what ran before the call counts.
        scope = Scope()
        _collect_bindings(tree.body, call.lineno, scope.bindings)
        return scope
    args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
    positional = [*func.args.posonlyargs, *func.args.args]
    with_default = positional[len(positional) - len(func.args.defaults) :]
    defaults = {a.arg: d for a, d in zip(with_default, func.args.defaults, strict=True)}
    kw_pairs = zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True)
    defaults.update({a.arg: d for a, d in kw_pairs if d is not None})
    scope = Scope(
        params={a.arg: a for a in args}, outer=top, param_order=[a.arg for a in args], defaults=defaults
    )
    _collect_bindings(func.body, call.lineno, scope.bindings)
    return scope


def resolve(expr: ast.expr, scope: Scope, depth: int = 0) -> ArgFact:
    """What the launch passes: follows names through assignments (bounded), never evaluates user code."""
    if depth > 12:
        return UNKNOWN_FACT
    line = getattr(expr, "lineno", 0)
    value = UNKNOWN if isinstance(expr, ast.Name) else evaluate(expr, _constant_env(scope, depth))
    if value is not UNKNOWN:
        return ArgFact("value", value=value, reason=f"value at line {line}")
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
        if isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
            owner = resolve(expr.value.value, scope, depth + 1)
            dim = _dim(owner, evaluate(expr.slice, {}))
            if dim is not None:
                return ArgFact("value", value=dim, reason=f"a tensor dimension at line {line}")
            return ArgFact("int", reason=f"a tensor dimension at line {line}")
        base = resolve(expr.value, scope, depth + 1)
        if base.kind == "tensor":
            return ArgFact("tensor", dtype=base.dtype, reason=base.reason)  # a view: layout no longer known
        return UNKNOWN_FACT
    if isinstance(expr, ast.Attribute) and expr.attr == "T":
        return resolve(expr.value, scope, depth + 1)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        found = scope.lookup(f"self.{expr.attr}")
        return resolve(found[1], scope, depth + 1) if found and found[0] == "expr" else UNKNOWN_FACT
    if isinstance(expr, ast.BinOp):
        left, right = resolve(expr.left, scope, depth + 1), resolve(expr.right, scope, depth + 1)
        kinds = {left.kind, right.kind}
        scaled = left if left.kind == "tensor" else right
        if kinds in ({"tensor", "value"}, {"tensor", "int"}, {"tensor", "float"}) and (scaled.dtype or "")[:2] in (
            "fp", "bf"
        ):  # a float tensor scaled or shifted by a scalar keeps its dtype and shape
            return ArgFact("tensor", dtype=scaled.dtype, reason=scaled.reason, shape=scaled.shape)
        if "tensor" in kinds:
            return UNKNOWN_FACT
        if kinds <= {"int", "value"} and not isinstance(expr.op, ast.Div):
            return ArgFact("int", reason=f"integer arithmetic at line {line}")
        if "float" in kinds:
            return ArgFact("float", reason=f"float arithmetic at line {line}")
    return UNKNOWN_FACT


class _ConstantEnv(dict):
    """Literal values of names in scope, looked up lazily by evaluate(); bounded by depth to stay cheap."""

    def __init__(self, scope: Scope, depth: int) -> None:
        super().__init__()
        self.scope = scope
        self.depth = depth

    def get(self, key: str, default: Any = UNKNOWN) -> Any:  # type: ignore[override]
        found = self.scope.lookup(key)
        if found is None or found[0] != "expr" or self.depth > 8:
            return default
        fact = resolve(found[1], self.scope, self.depth + 4)
        return fact.value if fact.kind == "value" else default


def _constant_env(scope: Scope, depth: int) -> dict[str, Any]:
    return _ConstantEnv(scope, depth)


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


def _torch_dtype(expr: ast.expr | None) -> str | None:
    if isinstance(expr, ast.Attribute) and expr.attr in TORCH_DTYPES:
        return TORCH_DTYPES[expr.attr]
    return None


def _call_fact(call: ast.Call, scope: Scope, depth: int) -> ArgFact:
    name = call_name(call.func)
    line = call.lineno
    dtype_kw = next((kw.value for kw in call.keywords if kw.arg == "dtype"), None)
    explicit = _torch_dtype(dtype_kw)
    is_method = isinstance(call.func, ast.Attribute) and not (
        isinstance(call.func.value, ast.Name) and call.func.value.id in ("torch", "th")
    )
    if not is_method and name in TENSOR_FACTORIES:
        dtype = explicit or TENSOR_FACTORIES[name]
        how = "dtype" if explicit else "torch's default dtype"
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
        if name == "to" and call.args and _torch_dtype(call.args[0]):
            return ArgFact("tensor", dtype=_torch_dtype(call.args[0]), reason=f".to() at line {line}")
        if name == "to" and explicit:
            return ArgFact("tensor", dtype=explicit, reason=f".to() at line {line}")
        if name in CAST_METHODS and not call.args:
            base = resolve(owner, scope, depth + 1)
            if base.kind == "tensor":
                return ArgFact("tensor", dtype=CAST_METHODS[name], reason=f".{name}() at line {line}")
        if name in NEW_METHODS:
            base = resolve(owner, scope, depth + 1)
            shape = _shape_args(call.args[:1], scope, depth) if name != "new_tensor" else None
            if explicit:
                return ArgFact("tensor", dtype=explicit, reason=f".{name}() at line {line}", shape=shape)
            if base.kind in ("tensor", "unknown"):
                reason = f".{name}() at line {line}" + (f" ({base.reason})" if base.reason else "")
                return ArgFact("tensor", dtype=base.dtype, reason=reason, shape=shape)
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
    if name in ("cdiv", "next_power_of_2", "len", "int"):
        return ArgFact("int", reason=f"{name}() at line {line}")
    if name == "float":
        return ArgFact("float", reason=f"float() at line {line}")
    return UNKNOWN_FACT


def _shape_args(args: list[ast.expr], scope: Scope, depth: int) -> tuple[Any, ...] | None:
    """Dims of `torch.empty(M, N)` / `torch.empty((M, N))`: ints where known, None where not."""
    found = scope.lookup(args[0].id) if len(args) == 1 and isinstance(args[0], ast.Name) else None
    if found is not None and found[0] == "expr" and isinstance(found[1], (ast.Tuple, ast.List)):
        args = [found[1]]  # `shape = (B, H, S, D)` then `torch.randn(shape)`
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    elif len(args) == 1 and _is_shape_of(args[0]):
        # torch.empty(x.shape) / y.new_empty(x.size()): x's shape, if known
        owner = args[0].value if isinstance(args[0], ast.Attribute) else args[0].func.value  # type: ignore[union-attr]
        return resolve(owner, scope, depth + 1).shape
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    dims: list[Any] = []
    for a in args:
        fact = resolve(a, scope, depth + 1)
        dims.append(fact.value if fact.kind == "value" and isinstance(fact.value, int) else None)
    return tuple(dims)


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


def _is_shape_of(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    )


def _rank(owner: ast.expr, fact: ArgFact, scope: Scope) -> int | None:
    if fact.shape is not None:
        return len(fact.shape)
    return scope.unpacked_rank(owner.id) if isinstance(owner, ast.Name) else None


def _dim(fact: ArgFact, index: Any) -> int | None:
    if fact.shape is None or not isinstance(index, int) or not -len(fact.shape) <= index < len(fact.shape):
        return None
    dim = fact.shape[index]
    return dim if isinstance(dim, int) else None


def _product(dims: tuple[Any, ...]) -> int | None:
    value = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        value *= d
    return value


def _int_method(name: str, owner: ast.expr, call: ast.Call, scope: Scope, depth: int, line: int) -> ArgFact:
    """`x.stride(d)`, `x.size(d)`, `x.numel()`: a value when the layout is known, else an int.

    Tensors are taken as contiguous (what torch allocates and what kernels are usually given), so the
    innermost stride is 1, which the JIT specializes to a constant."""
    fact = resolve(owner, scope, depth + 1)
    index = evaluate(call.args[0], {}) if call.args else None
    if fact.kind in ("tensor", "unknown") and name == "stride" and isinstance(index, int):
        rank = _rank(owner, fact, scope)
        if rank is not None and index in (rank - 1, -1):
            return ArgFact(
                "value", value=1, reason=f"innermost stride at line {line}; tensor assumed contiguous"
            )
        if fact.shape is not None and 0 <= index < len(fact.shape):
            value = _product(fact.shape[index + 1 :])
            if value is not None:
                return ArgFact(
                    "value", value=value, reason=f"stride of a contiguous {fact.shape} tensor at line {line}"
                )
    if fact.kind == "tensor" and name == "size" and isinstance(index, int):
        dim = _dim(fact, index)
        if dim is not None:
            return ArgFact("value", value=dim, reason=f"size at line {line}")
    if fact.kind == "tensor" and name == "numel" and fact.shape:
        value = _product(fact.shape)
        if value is not None:
            return ArgFact("value", value=value, reason=f"numel of a {fact.shape} tensor at line {line}")
    return ArgFact("int", reason=f".{name}() at line {line}")
