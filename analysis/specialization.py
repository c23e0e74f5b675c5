"""The argument types and constexpr values to compile each kernel with, and where each one came from.

Sources, highest priority first: launches recorded by a runner, a `# tritonlens:` pragma at the kernel,
`[tool.tritonlens.kernels.<name>]` in pyproject.toml (the caller reads it and passes the table), launch
sites in the file (literals, names bound to literals, tensors' dtypes), `@triton.autotune` configs (one
variant each), `@triton.heuristics` (lambdas evaluated without `eval`), parameter defaults, and types
implied by the kernel body. Specialization follows Triton 3.6's JIT: pointers are assumed 16-byte aligned
(`tt.divisibility=16`), ints divisible by 16 get the same hint, and an int equal to 1 becomes the constant 1.
An int whose value is not visible is compiled as the common case (divisible by 16), and says so in its
provenance (`ASSUMED_DIVISIBLE`), so findings that depend on its value can be told apart.

Pure: no triton/torch imports; never raises on user text (unparsable code gives no specializations).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .findings import Finding, Severity, Span
from .front_rules import BAD_OVERRIDE, CANNOT_SPECIALIZE
from .kernels import call_form_wrappers
from .pragmas import DTYPE_VALUE_RE, Pragma, TritonType, comment_lines, parse_value, pragma_for
from .safe_eval import UNKNOWN, evaluate
from .source_lines import source_lines
from .specialization_guess import ASSUMED_TYPICAL, typical_value
from .specialization_infer import infer_types
from .specialization_launch import (
    ArgFact,
    CallIndex,
    Launch,
    find_launches,
    index_calls,
    module_scope,
    resolve,
)

OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "multibuffer")
MAX_VARIANTS = 16
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Specialization:
    kernel: str
    label: str  # "launch at line 88", "autotune config 2", "recorded launch 1", "defaults"
    signature: dict[str, str]  # every param in order: "*fp16" | "i32" | "fp32" | "constexpr" ...
    constants: dict[str, Any]  # constexpr values and JIT constant specializations (value 1)
    divisibility: tuple[str, ...]  # args with tt.divisibility=16
    options: dict[str, Any]  # num_warps, num_stages, ...
    provenance: dict[str, str]  # arg -> "pragma line 12" / "launch at line 88" / "default" / "inferred ..."
    missing: tuple[str, ...] = ()  # constexpr args with no value: this variant cannot be compiled
    line: int | None = None  # source line of the launch / config it comes from

    @property
    def complete(self) -> bool:
        return not self.missing

    def key(self) -> tuple[Any, ...]:
        """Identity of what would be compiled (labels and provenance aside)."""
        return (
            tuple(self.signature.items()),
            tuple(sorted((k, repr(v)) for k, v in self.constants.items())),
            self.divisibility,
            tuple(sorted((k, repr(v)) for k, v in self.options.items())),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "label": self.label,
            "signature": dict(self.signature),
            "constants": dict(self.constants),
            "divisibility": list(self.divisibility),
            "options": dict(self.options),
            "provenance": dict(self.provenance),
            "missing": list(self.missing),
            "line": self.line,
        }


@dataclass
class KernelSource:
    """One `@triton.jit` function as specialization sees it."""

    name: str
    node: ast.FunctionDef
    params: list[ast.arg]
    constexpr: set[str]
    defaults: dict[str, ast.expr]
    configs: list[tuple[int, dict[str, Any], dict[str, Any]]]  # (line, kwargs, options) per triton.Config
    configs_unreadable: bool
    heuristics: dict[str, tuple[ast.Lambda, int]]  # param -> (lambda, line)
    do_not_specialize: set[str]
    pragma: Pragma
    first_line: int  # first decorator line

    @property
    def param_names(self) -> list[str]:
        return [p.arg for p in self.params]


@dataclass
class _Fact:
    source: str  # provenance text
    value: Any = UNKNOWN  # a known value
    type: str | None = None  # a known type (Triton spelling; "*" alone = pointer of unknown element type)


@dataclass
class ParsedModule:
    tree: ast.Module | None
    source: str
    kernels: dict[str, KernelSource] = field(default_factory=dict)
    error: str | None = None
    _calls: CallIndex | None = None

    @property
    def calls(self) -> CallIndex:
        """Launch sites and calls of the whole module, indexed once (shared by every kernel)."""
        if self._calls is None:
            assert self.tree is not None
            self._calls = index_calls(self.tree)
        return self._calls


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _decorator_kind(dec: ast.expr) -> str:
    last = _dotted(dec).rsplit(".", 1)[-1]
    return last if last in ("jit", "autotune", "heuristics") else ""


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return UNKNOWN
    value = evaluate(node, {})
    if value is UNKNOWN and isinstance(node, ast.Attribute):
        text = ast.unparse(node)
        if DTYPE_VALUE_RE.match(text):  # `OUT_DTYPE: tl.constexpr = tl.float16`, a dtype in a Config
            return "tl." + node.attr
    return value


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _config_list(
    node: ast.expr | None,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, ast.FunctionDef],
    depth: int,
) -> ast.expr | None:
    """The literal list behind `configs=`: a module-level name, or a module function without arguments
    that returns one (`configs=get_autotune_config()`, as in the Triton tutorials; its first return)."""
    if depth > 4 or node is None:
        return node
    if isinstance(node, ast.Name) and node.id in module_env:
        return _config_list(module_env[node.id], module_env, functions, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
        fn = functions.get(node.func.id)
        returns = (
            sorted((r for r in ast.walk(fn) if isinstance(r, ast.Return)), key=lambda r: r.lineno)
            if fn
            else []
        )
        for ret in returns:  # the first return, in source order, that gives a non-empty list
            got = _config_list(ret.value, module_env, functions, depth + 1)
            if isinstance(got, (ast.List, ast.Tuple)) and got.elts:
                return got
    return node


def _read_configs(
    dec: ast.Call,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, ast.FunctionDef] | None = None,
) -> tuple[list[tuple[int, dict, dict]], bool]:
    functions = functions or {}
    node = _keyword(dec, "configs") or (dec.args[0] if dec.args else None)
    node = _config_list(node, module_env, functions, 0)
    if not isinstance(node, (ast.List, ast.Tuple)):
        return [], node is not None
    configs: list[tuple[int, dict, dict]] = []
    unreadable = False
    for item in node.elts:
        if not (isinstance(item, ast.Call) and _dotted(item).endswith("Config")):
            unreadable = True
            continue
        raw = item.args[0] if item.args else _keyword(item, "kwargs")
        kwargs: dict[str, Any] = {}
        if isinstance(raw, ast.Dict):
            for k, v in zip(raw.keys, raw.values, strict=True):
                key, value = _literal(k), _literal(v)
                if isinstance(key, str) and value is not UNKNOWN:
                    kwargs[key] = value
        elif isinstance(raw, ast.Call) and _dotted(raw) == "dict":
            kwargs = {
                kw.arg: _literal(kw.value)
                for kw in raw.keywords
                if kw.arg and _literal(kw.value) is not UNKNOWN
            }
        options = {
            kw.arg: _literal(kw.value)
            for kw in item.keywords
            if kw.arg in OPTION_NAMES and _literal(kw.value) is not UNKNOWN
        }
        configs.append((item.lineno, kwargs, options))
    return configs, unreadable


def _read_heuristics(dec: ast.Call) -> dict[str, tuple[ast.Lambda, int]]:
    node = _keyword(dec, "values") or (dec.args[0] if dec.args else None)
    out: dict[str, tuple[ast.Lambda, int]] = {}
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            key = _literal(k)
            if isinstance(key, str) and isinstance(v, ast.Lambda):
                out[key] = (v, v.lineno)
    return out


def parse_kernels(source: str) -> ParsedModule:
    """Every `@triton.jit` function of the source (aliases like `@tr.jit` / `@jit` included)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return ParsedModule(None, source, error=f"the file does not parse: {exc}")
    module_env = module_scope(tree).bindings
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    comments = comment_lines(source)
    lines = source_lines(source)
    parsed = ParsedModule(tree, source)
    wrapped = call_form_wrappers(tree.body)
    for node in _function_defs(tree):
        if node.name in parsed.kernels:
            continue
        decorator_list = list(node.decorator_list)
        if node.name in wrapped and node in tree.body:  # `f = triton.jit(f)`: the calls act as decorators
            decorator_list += wrapped[node.name]
        kinds = [_decorator_kind(d) for d in decorator_list]
        if "jit" not in kinds:
            continue
        args = node.args
        params = [*args.posonlyargs, *args.args]
        defaults = dict(
            zip([p.arg for p in params][len(params) - len(args.defaults) :], args.defaults, strict=True)
        )
        constexpr = {
            p.arg for p in params if p.annotation is not None and "constexpr" in ast.unparse(p.annotation)
        }
        configs: list[tuple[int, dict, dict]] = []
        unreadable = False
        heuristics: dict[str, tuple[ast.Lambda, int]] = {}
        dns: set[str] = set()
        for dec, kind in zip(decorator_list, kinds, strict=True):
            if kind == "autotune" and isinstance(dec, ast.Call):
                configs, unreadable = _read_configs(dec, module_env, functions)
            elif kind == "heuristics" and isinstance(dec, ast.Call):
                heuristics.update(_read_heuristics(dec))
            elif kind == "jit" and isinstance(dec, ast.Call):
                names = _literal(_keyword(dec, "do_not_specialize"))
                if isinstance(names, (list, tuple)):
                    dns |= {
                        params[n].arg if isinstance(n, int) and n < len(params) else str(n) for n in names
                    }
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])  # wrapping calls live elsewhere
        parsed.kernels[node.name] = KernelSource(
            name=node.name,
            node=node,
            params=params,
            constexpr=constexpr,
            defaults=defaults,
            configs=configs,
            configs_unreadable=unreadable,
            heuristics=heuristics,
            do_not_specialize=dns,
            pragma=pragma_for(comments, first, node.lineno, lines),
            first_line=first,
        )
    return parsed


def _function_defs(tree: ast.Module) -> list[ast.FunctionDef]:
    """Every `def` at any nesting (through classes, functions and compound statements), in source order."""
    out: list[ast.FunctionDef] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, ast.FunctionDef):
                out.append(child)
            if isinstance(child, ast.stmt):
                stack.append(child)
    return sorted(out, key=lambda n: n.lineno)


def _value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if I32_MIN <= value <= I32_MAX else ("u64" if value >= 2**63 else "i64")
    if isinstance(value, float):
        return "fp32"
    return None


INT_TYPES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
# Provenance of an int compiled with tt.divisibility=16 although its value is not visible (pipeline.py keys on it).
ASSUMED_DIVISIBLE = "value unknown: compiled as a multiple of 16, the variant the JIT builds for most sizes"


def _fact_from_literal(value: Any, source: str) -> _Fact:
    if isinstance(value, TritonType):
        return _Fact(source, type=value.spelling)
    return _Fact(source, value=value)


def _fact_from_launch(fact: ArgFact, source: str) -> _Fact | None:
    where = f"{source}: {fact.reason}" if fact.reason else source
    if fact.kind == "value":
        derived = fact.reason and not fact.reason.startswith("value at line")
        return _Fact(f"{source}: {fact.reason}" if derived else source, value=fact.value)
    if fact.kind == "tensor":
        return _Fact(where, type=f"*{fact.dtype}" if fact.dtype else "*")
    if fact.kind == "int":
        return _Fact(where, type="i32")
    if fact.kind == "float":
        return _Fact(where, type="fp32")
    return None


def _launch_facts(kernel: KernelSource, launch: Launch) -> tuple[dict[str, _Fact], dict[str, Any]]:
    """Per-param facts and launch options (num_warps=... keywords) from one launch site."""
    source = f"launch at line {launch.line}"
    names = kernel.param_names
    facts: dict[str, _Fact] = {}
    options: dict[str, Any] = {}
    for i, arg in enumerate(launch.call.args):
        if isinstance(arg, ast.Starred) or i >= len(names):
            break
        got = _fact_from_launch(resolve(arg, launch.scope), source)
        if got:
            facts[names[i]] = got
    for kw in launch.call.keywords:
        if kw.arg is None:
            continue
        fact = resolve(kw.value, launch.scope)
        if kw.arg in names:
            got = _fact_from_launch(fact, source)
            if got:
                facts[kw.arg] = got
        elif kw.arg in OPTION_NAMES and fact.kind == "value":
            options[kw.arg] = fact.value
    return facts, options


def _override_facts(
    kernel: KernelSource, overrides: Mapping[str, Any] | None
) -> tuple[dict[str, _Fact], dict[str, Any], dict[str, _Fact], dict[str, Any]]:
    """(pragma facts, pragma options, pyproject facts, pyproject options)."""
    pragma_facts: dict[str, _Fact] = {}
    pragma_options: dict[str, Any] = {}
    params = set(kernel.param_names)
    for entry in kernel.pragma.entries:
        # a kernel parameter named like an option (`num_stages: tl.constexpr`) is the parameter
        is_option = entry.name in OPTION_NAMES and entry.name not in params
        target = pragma_options if is_option else pragma_facts
        if is_option:
            target[entry.name] = entry.value
        else:
            target[entry.name] = _fact_from_literal(entry.value, f"pragma line {entry.line}")
    project_facts: dict[str, _Fact] = {}
    project_options: dict[str, Any] = {}
    for name, raw in (overrides or {}).items():
        value: Any = raw
        if isinstance(raw, str):
            try:
                value = parse_value(raw)
            except ValueError:
                value = raw  # a plain string constexpr (e.g. ACTIVATION = "relu")
        if name in OPTION_NAMES and name not in params:
            project_options[name] = value
        else:
            project_facts[name] = _fact_from_literal(
                value, f"pyproject.toml [tool.tritonlens.kernels.{kernel.name}]"
            )
    return pragma_facts, pragma_options, project_facts, project_options


def _build(
    kernel: KernelSource,
    label: str,
    line: int | None,
    layers: Sequence[dict[str, _Fact]],
    options: dict[str, Any],
    inferred: dict[str, _Fact],
    guess: bool = True,
) -> Specialization:
    signature: dict[str, str] = {}
    constants: dict[str, Any] = {}
    divisibility: list[str] = []
    provenance: dict[str, str] = {}
    missing: list[str] = []
    chosen: dict[str, _Fact] = {}
    for name in kernel.param_names:
        facts = [layer[name] for layer in layers if name in layer]
        default = kernel.defaults.get(name)
        if default is not None and _literal(default) is not UNKNOWN:
            facts.append(_Fact("default", value=_literal(default)))
        if name in inferred:
            facts.append(inferred[name])
        if name in kernel.constexpr:
            valued = next((f for f in facts if f.value is not UNKNOWN), None)
            if valued:
                chosen[name] = valued
            continue
        first = next((f for f in facts if f.value is not UNKNOWN or f.type), None)
        if first is None:
            chosen[name] = _Fact("assumed i32: nothing shows this argument's type", type="i32")
        elif first.type == "*":
            # a tensor whose dtype is not visible: take the element type from a lower source if any
            element = next((f for f in facts if f.type and f.type.startswith("*") and f.type != "*"), None)
            chosen[name] = _Fact(
                f"{first.source}; {element.source}"
                if element
                else f"{first.source}; element type assumed fp32",
                type=element.type if element else "*fp32",
            )
        else:
            chosen[name] = first
    # heuristics see every value known so far (constexprs and literal runtime args)
    env = {n: f.value for n, f in chosen.items() if f.value is not UNKNOWN}
    for name, (fn, hline) in kernel.heuristics.items():
        if name in chosen and not chosen[name].source.startswith("default"):
            continue
        args_name = fn.args.args[0].arg if fn.args.args else None
        value = evaluate(fn.body, env, args_name)
        if value is not UNKNOWN:
            chosen[name] = _Fact(f"heuristics at line {hline}", value=value)
            env[name] = value
    for name in kernel.param_names:
        if name not in chosen and name in kernel.constexpr and guess:
            # nothing shows a value: compile the most likely one, labeled so no finding passes it off as fact
            chosen[name] = _Fact(ASSUMED_TYPICAL, value=typical_value(kernel.node, name))
        fact = chosen.get(name)
        if fact is None:
            signature[name] = "constexpr"
            missing.append(name)
            continue
        provenance[name] = fact.source
        if name in kernel.constexpr:
            signature[name] = "constexpr"
            constants[name] = fact.value
        elif fact.value is not UNKNOWN:
            _specialize_value(name, fact, kernel, signature, constants, divisibility, provenance)
        else:
            signature[name] = fact.type or "i32"
            if signature[name].startswith("*"):
                divisibility.append(
                    name
                )  # the JIT sees aligned tensors (torch allocations are 16-byte aligned)
            elif signature[name] in INT_TYPES and name not in kernel.do_not_specialize:
                # No visible value: compile the variant most launches get (sizes and strides are usually
                # multiples of 16). Findings that depend on the value say so; a pragma gives the real one.
                divisibility.append(name)
                provenance[name] = f"{fact.source}; {ASSUMED_DIVISIBLE}"
    return Specialization(
        kernel=kernel.name,
        label=label,
        signature=signature,
        constants=constants,
        divisibility=tuple(divisibility),
        options=dict(options),
        provenance=provenance,
        missing=tuple(missing),
        line=line,
    )


def _specialize_value(
    name: str,
    fact: _Fact,
    kernel: KernelSource,
    signature: dict[str, str],
    constants: dict[str, Any],
    divisibility: list[str],
    provenance: dict[str, str],
) -> None:
    """A runtime arg with a known value, typed and specialized as Triton 3.6's JIT would."""
    value = fact.value
    specialize = name not in kernel.do_not_specialize
    if value is None or (
        specialize and isinstance(value, int) and not isinstance(value, bool) and value == 1
    ):
        signature[name] = "constexpr"  # 3.6 turns None and ints equal to 1 into constants
        constants[name] = value
        provenance[name] = f"{fact.source} (the JIT specializes {value!r} to a constant)"
        return
    signature[name] = _value_type(value) or "i32"
    if specialize and isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0:
        divisibility.append(name)
        provenance[name] = f"{fact.source} (divisible by 16)"


def specializations(
    module: Any,
    kernel: str,
    overrides: Mapping[str, Any] | None = None,
    recorded: Sequence[Mapping[str, Any]] | None = None,
    *,
    limit: int = MAX_VARIANTS,
) -> list[Specialization]:
    """Variants to compile `kernel` with, best first. `module` is the source text, a ParsedModule, or any
    object with a `source` attribute (e.g. kernels.ModuleInfo). `overrides` is the kernel's pyproject table."""
    parsed = _as_parsed(module)
    info = parsed.kernels.get(kernel)
    if info is None:
        return []
    inferred = {n: _Fact(t.reason, type=t.type) for n, t in infer_types(info.node, info.param_names).items()}
    pragma_facts, pragma_opts, project_facts, project_opts = _override_facts(info, overrides)
    out: list[Specialization] = []
    for i, entry in enumerate(e for e in (recorded or ()) if e.get("kernel") == kernel):
        out.append(_from_recorded(info, entry, i + 1, inferred))
    if out:
        return _dedupe(out)[:limit]
    bases: list[tuple[str, int | None, dict[str, _Fact], dict[str, Any]]] = []
    assert parsed.tree is not None
    for launch in find_launches(parsed.calls, kernel):
        facts, opts = _launch_facts(info, launch)
        bases.append((f"launch at line {launch.line}", launch.line, facts, opts))
    if not bases:
        bases.append(("defaults", None, {}, {}))
    configs = info.configs or [(None, {}, {})]
    for base_label, base_line, launch_facts, launch_opts in bases:
        for n, (cline, kwargs, copts) in enumerate(configs, start=1):
            label = base_label
            if cline is not None:
                config_label = f"autotune config {n}"
                label = config_label if base_label == "defaults" else f"{base_label}, {config_label}"
            config_facts = {
                k: _Fact(f"autotune config {n} (line {cline})", value=v) for k, v in kwargs.items()
            }
            options = {**copts, **launch_opts, **project_opts, **pragma_opts}
            layers = [pragma_facts, project_facts, launch_facts, config_facts]
            out.append(_build(info, label, cline or base_line, layers, options, inferred))
            if len(out) >= limit:
                return _dedupe(out)
    return _dedupe(out)


def _from_recorded(
    info: KernelSource, entry: Mapping[str, Any], n: int, inferred: dict[str, _Fact]
) -> Specialization:
    label = f"recorded launch {n}"
    layer: dict[str, _Fact] = {}
    signature = dict(entry.get("signature") or {})
    constants = dict(entry.get("constants") or {})
    for name in info.param_names:
        if name in constants:
            layer[name] = _Fact(label, value=constants[name])
        elif name in signature and signature[name] != "constexpr":
            layer[name] = _Fact(label, type=signature[name])
    spec = _build(info, label, None, [layer], dict(entry.get("options") or {}), inferred)
    recorded_div = entry.get("divisibility")
    if isinstance(recorded_div, (list, tuple)):
        # the runner saw the real pointers and ints: its divisibility replaces our assumption
        div = tuple(d for d in recorded_div if d in spec.signature and spec.signature[d] != "constexpr")
        suffix = f"; {ASSUMED_DIVISIBLE}"
        provenance = {k: v.replace(suffix, "") for k, v in spec.provenance.items()}
        spec = Specialization(**{**spec.__dict__, "divisibility": div, "provenance": provenance})
    return spec


def _dedupe(specs: list[Specialization]) -> list[Specialization]:
    seen: set[tuple[Any, ...]] = set()
    out: list[Specialization] = []
    for spec in specs:
        key = spec.key()
        if key not in seen:
            seen.add(key)
            out.append(spec)
    return out


def _as_parsed(module: Any) -> ParsedModule:
    if isinstance(module, ParsedModule):
        return module
    if isinstance(module, str):
        return parse_kernels(module)
    source = getattr(module, "source", None)
    if isinstance(source, str):
        return parse_kernels(source)
    raise TypeError("specializations() needs the source text (str), a ParsedModule or an object with .source")


# ---- findings ---------------------------------------------------------------------------------------


def kernel_name_span(source: str, info: KernelSource) -> Span:
    lines = source_lines(source)
    text = lines[info.node.lineno - 1] if info.node.lineno <= len(lines) else ""
    col = text.find(info.name, text.find("def") + 3 if "def" in text else 0)
    col = max(col, 0)
    return Span(info.node.lineno, col, info.node.lineno, col + len(info.name))


STR_PLACEHOLDER = "'<str>'"  # a Python string literal, as pragma values are


def _placeholder(info: KernelSource, name: str) -> str:
    """`<bool>` for flags tested with `if`, `'<str>'` for names compared with a string (`ACTIVATION ==
    "leaky_relu"` in the matmul tutorial), `<int>` otherwise (block sizes, counts)."""
    for node in ast.walk(info.node):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            named = any(isinstance(x, ast.Name) and x.id == name for x in sides)
            if named and any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in sides):
                return STR_PLACEHOLDER
        if (
            isinstance(node, (ast.If, ast.IfExp, ast.While))
            and isinstance(node.test, ast.Name)
            and node.test.id == name
        ):
            return "<bool>"
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
            and isinstance(node.operand, ast.Name)
        ):
            if node.operand.id == name:
                return "<bool>"
    return "<int>"


def pragma_text(info: KernelSource, missing: Sequence[str]) -> str:
    return "# tritonlens: " + ", ".join(f"{m}={_placeholder(info, m)}" for m in missing)


def specialization_findings(
    module: Any,
    kernel: str,
    specs: Sequence[Specialization],
    overrides: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """TL002 when no variant can be compiled (says exactly what to add), TL003 for unusable overrides."""
    parsed = _as_parsed(module)
    info = parsed.kernels.get(kernel)
    if info is None:
        return []
    findings: list[Finding] = []
    span = kernel_name_span(parsed.source, info)
    guessed = assumed_constexprs(specs[0]) if specs and specs[0].complete else {}
    if guessed and not any(s.complete and not assumed_constexprs(s) for s in specs):
        text = pragma_text(info, list(guessed))
        values = ", ".join(f"{k}={v!r}" for k, v in guessed.items())
        findings.append(
            CANNOT_SPECIALIZE.finding(
                (
                    f"levels 3-4 compiled {kernel} with assumed values {values} (nothing shows them); findings "
                    f"of that compile say so. Record real launches (`tritonlens record -- pytest ...` or "
                    f'`-- python script.py`), or add "{text}" above the kernel'
                ),
                span,
                kernel=kernel,
                data={"missing": list(guessed), "assumed": guessed, "insert_text": text, "insert_line": info.first_line},
            )
        )
    if specs and not any(s.complete for s in specs):
        missing = list(dict.fromkeys(m for s in specs for m in s.missing))
        text = pragma_text(info, missing)
        names = ", ".join(missing)
        table = f"[tool.tritonlens.kernels.{kernel}]"
        findings.append(
            CANNOT_SPECIALIZE.finding(
                (
                    f"cannot specialize {kernel} for IR analysis: no value for {names}; "
                    f'add "{text}" above the kernel (or set {names} under {table} in pyproject.toml)'
                ),
                span,
                severity=Severity.INFO,
                kernel=kernel,
                data={"missing": missing, "insert_text": text, "insert_line": info.first_line},
            )
        )
    for problem in info.pragma.problems:
        findings.append(
            BAD_OVERRIDE.finding(
                f"tritonlens pragma: {problem.message}",
                Span(problem.line, problem.col, problem.line, problem.end_col),
                kernel=kernel,
            )
        )
    known = set(info.param_names) | set(OPTION_NAMES)
    for entry in info.pragma.entries:
        if entry.name not in known:
            start = entry.col
            findings.append(
                BAD_OVERRIDE.finding(
                    f"tritonlens pragma names {entry.name!r}, which is not a parameter of {kernel}",
                    Span(entry.line, start, entry.line, start + len(entry.name)),
                    kernel=kernel,
                )
            )
    for name in overrides or {}:
        if name not in known:
            findings.append(
                BAD_OVERRIDE.finding(
                    (
                        f"pyproject.toml [tool.tritonlens.kernels.{kernel}] sets {name!r}, "
                        f"which is not a parameter of {kernel}"
                    ),
                    span,
                    kernel=kernel,
                )
            )
    return findings


def assumed_constexprs(spec: Specialization) -> dict[str, Any]:
    """Constexprs of `spec` whose value is a labeled guess (specialization_guess), in parameter order."""
    return {k: spec.constants.get(k) for k, why in spec.provenance.items() if why == ASSUMED_TYPICAL}
