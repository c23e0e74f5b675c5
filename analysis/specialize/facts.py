"""What each source says about one argument (`Fact`: a value, a type, and where it came from), and how the
facts of every source combine into one `Specialization` the way Triton 3.6's JIT specializes a launch."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..source.safe_eval import NOT_NONE, UNKNOWN, evaluate
from .asserts import stated_values
from .cases import selectors
from .dtype_ties import dtype_ties, made_like
from .guess import ASSUMED_TYPICAL, typical_value, typical_values
from .kernels import SpecKernel, literal_value
from .launch import OUTER_STRIDE, ArgFact, resolve
from .launch_guess import LAUNCH_NOTE, derived_value, relation, relation_bases, shown_guess, within
from .optional import reconcile
from .pragmas import TritonType, parse_value
from .relations import fit_guesses
from .scope import Launch
from .strides import ASSUMED_UNIT_STRIDE, innermost_strides
from .variant import (
    ASSUMED_DIVISIBLE,
    I32_MAX,
    I32_MIN,
    INT_TYPES,
    OPTION_NAMES,
    Specialization,
)


@dataclass
class Fact:
    source: str  # provenance text
    value: Any = UNKNOWN  # a known value
    type: str | None = None  # a known type (Triton spelling; "*" alone = pointer of unknown element type)
    likely: tuple[Any, ...] = ()  # values the launch shows it to be one of (a guess takes the first)
    bounds: tuple[int | None, int | None] = (None, None)  # the least and greatest value the launch can pass
    derived: ast.expr | None = None  # the launch computes it from other parameters (`next_power_of_2(N)`)
    dtype_as: str | None = None  # the parameter whose tensor this one was made like (dtype_ties.py)


def _value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if I32_MIN <= value <= I32_MAX else ("u64" if value >= 2**63 else "i64")
    if isinstance(value, float):
        return "fp32"
    return None


def fact_from_literal(value: Any, source: str) -> Fact:
    if isinstance(value, TritonType):
        return Fact(source, type=value.spelling)
    return Fact(source, value=value)


def _fact_from_launch(fact: ArgFact, source: str) -> Fact | None:
    where = f"{source}: {fact.reason}" if fact.reason else source
    if fact.kind == "value":
        derived = fact.reason and not fact.reason.startswith("value at line")
        return Fact(f"{source}: {fact.reason}" if derived else source, value=fact.value)
    if fact.kind == "tensor":
        return Fact(where, type=f"*{fact.dtype}" if fact.dtype else "*")
    if fact.kind == "int":
        return Fact(where, type="i32", likely=fact.likely, bounds=fact.bounds)
    if fact.kind == "float":
        return Fact(where, type="fp32", likely=fact.likely)
    if fact.kind == "choice":  # strings or bools the launch chooses between: constexprs, no runtime type
        return Fact(where, likely=fact.likely)
    return None


def launch_facts(
    kernel: SpecKernel, launch: Launch, source: str | None = None
) -> tuple[dict[str, Fact], dict[str, Any]]:
    """Per-param facts and launch options (num_warps=... keywords) from one launch site; `source` names a launch
    in another file of the workspace (`launch at ops/wrapper.py:42`)."""
    source = source or f"launch at line {launch.line}"
    names = kernel.param_names
    facts: dict[str, Fact] = {}
    options: dict[str, Any] = {}
    passed: dict[str, ast.expr] = {}
    for i, arg in enumerate(launch.call.args):
        if isinstance(arg, ast.Starred) or i >= len(names):
            break
        passed[names[i]] = arg
    for kw in launch.call.keywords:
        if kw.arg is None:
            continue
        if kw.arg in names:
            passed[kw.arg] = kw.value
        elif kw.arg in OPTION_NAMES:
            fact = resolve(kw.value, launch.scope)
            if fact.kind == "value":
                options[kw.arg] = fact.value
    for name, arg in passed.items():
        fact = resolve(arg, launch.scope)
        got = _fact_from_launch(fact, source)
        if fact.kind != "value" and name in kernel.constexpr:  # `W=next_power_of_2(n)`, n what N gets
            tied = relation(arg, launch.scope, passed)
            if tied is not None:
                got = replace(got or Fact(source), derived=tied)
        if got:
            facts[name] = got
    for name, source_param in dtype_ties(passed, launch.scope).items():
        if name in facts and facts[name].type == "*":  # its dtype not visible: it is the other one's
            facts[name] = replace(facts[name], dtype_as=source_param)
    return facts, options


def override_facts(
    kernel: SpecKernel, overrides: Mapping[str, Any] | None
) -> tuple[dict[str, Fact], dict[str, Any], dict[str, Fact], dict[str, Any]]:
    """(pragma facts, pragma options, pyproject facts, pyproject options)."""
    pragma_facts: dict[str, Fact] = {}
    pragma_options: dict[str, Any] = {}
    params = set(kernel.param_names)
    for entry in kernel.pragma.entries:
        # a kernel parameter named like an option (`num_stages: tl.constexpr`) is the parameter
        is_option = entry.name in OPTION_NAMES and entry.name not in params
        target = pragma_options if is_option else pragma_facts
        if is_option:
            target[entry.name] = entry.value
        else:
            target[entry.name] = fact_from_literal(entry.value, f"pragma line {entry.line}")
    project_facts: dict[str, Fact] = {}
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
            project_facts[name] = fact_from_literal(
                value, f"pyproject.toml [tool.tritonlens.kernels.{kernel.name}]"
            )
    return pragma_facts, pragma_options, project_facts, project_options


def _follow_dtype_ties(layers: Sequence[dict[str, Fact]], chosen: dict[str, Fact]) -> None:
    """A pointer the launch made like another argument (`empty_like(q)`), neither dtype visible: it takes the
    element type chosen for that argument (the guess stays named as one), never a second, independent guess."""
    for layer in layers:
        for name, fact in layer.items():
            other = chosen.get(fact.dtype_as or "")
            mine = chosen.get(name)
            if other is None or mine is None or not (other.type or "").startswith("*") or other.type == "*":
                continue
            if (mine.type or "").startswith("*") and mine.source.startswith(fact.source):  # no layer above says
                chosen[name] = Fact(f"{fact.source}; {made_like(fact.dtype_as or '')}: its element type "
                                    f"({other.source})", type=other.type)


def build_variant(
    kernel: SpecKernel,
    label: str,
    line: int | None,
    layers: Sequence[dict[str, Fact]],
    options: dict[str, Any],
    inferred: dict[str, Fact],
    guess: bool = True,
) -> Specialization:
    signature: dict[str, str] = {}
    constants: dict[str, Any] = {}
    divisibility: list[str] = []
    provenance: dict[str, str] = {}
    missing: list[str] = []
    chosen: dict[str, Fact] = {}
    derived: dict[str, Fact] = {}
    bounded: dict[str, Fact] = {}
    shown_values: dict[str, int] = {}  # runtime ints a launch shows (Specialization.shown)
    stated = stated_values(kernel.node)
    for name in kernel.param_names:
        facts = [layer[name] for layer in layers if name in layer]
        if name in stated and not any(f.value is not UNKNOWN for f in facts):
            facts.insert(0, Fact(stated[name][1], value=stated[name][0]))  # the kernel states it: no guess
        default = kernel.defaults.get(name)
        if default is not None and literal_value(default) is not UNKNOWN:
            facts.append(Fact("default", value=literal_value(default)))
        if name in inferred:
            facts.append(inferred[name])
        if name in kernel.constexpr:
            valued = next((f for f in facts if f.value is not UNKNOWN), None)
            shown = shown_guess(facts) if guess and not valued else None
            tied = next((f for f in facts if f.derived is not None), None) if guess and not valued else None
            if valued:
                chosen[name] = valued
            elif tied is not None:
                derived[name] = tied
            elif shown is not None:  # a launch shows its candidates or its kind: the guess is one of those
                chosen[name] = Fact(f"{ASSUMED_TYPICAL}; {shown[1]}", value=shown[0])
            elif guess and not valued:
                ranged = next((f for f in facts if f.bounds != (None, None)), None)
                if ranged is not None:
                    bounded[name] = ranged
            continue
        first = next((f for f in facts if f.value is not UNKNOWN or f.type), None)
        if first is None:
            chosen[name] = Fact("assumed i32: nothing shows this argument's type", type="i32")
        elif first.type == "*":
            # a tensor whose dtype is not visible: take the element type from a lower source if any
            element = next((f for f in facts if f.type and f.type.startswith("*") and f.type != "*"), None)
            chosen[name] = Fact(
                f"{first.source}; {element.source}"
                if element
                else f"{first.source}; element type assumed fp32",
                type=element.type if element else "*fp32",
            )
        else:
            chosen[name] = first
    _follow_dtype_ties(layers, chosen)
    _heuristics(kernel, chosen, ("default",))
    guessed = [n for n in kernel.param_names if n not in chosen and n not in derived and n in kernel.constexpr]
    if guess:  # nothing shows a value: compile the most likely one, labeled so no finding passes it as fact
        typical = typical_values(kernel.node, guessed, kernel.module_functions)
        chosen.update({n: Fact(ASSUMED_TYPICAL, value=v) for n, v in typical.items()})
        for n, ranged in bounded.items():  # a launch shows the least or greatest value: the guess stays within
            if n in typical:
                value, note = within(typical[n], ranged.bounds, ranged.source)
                chosen[n] = Fact(f"{ASSUMED_TYPICAL}; {note}", value=value)
        for n, (v, note) in selectors(
            kernel.node, guessed, kernel.module_env, kernel.module_functions
        ).items():
            chosen[n] = Fact(f"{ASSUMED_TYPICAL}; {note}", value=v)  # enum-like: a case, never a size
        for n, tied in derived.items():
            chosen[n] = _derived_fact(kernel, n, tied, chosen)
    pointers = {n: f.type for n, f in inferred.items() if f.type and f.type.startswith("*")}
    if reconcile(kernel.node, frozenset(kernel.constexpr), chosen, pointers):
        _heuristics(kernel, chosen, ("default", "heuristics", ASSUMED_TYPICAL))  # on what is passed now
    # a recorded launch shows every stride's real value: no stride is assumed there
    unit_strides = frozenset() if label.startswith("recorded launch") else innermost_strides(kernel.param_names)
    for name in kernel.param_names:
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
            if name not in constants and type(fact.value) is int and not fact.source.startswith("assumed"):
                shown_values[name] = fact.value
        else:
            signature[name] = fact.type or "i32"
            if signature[name].startswith("*"):
                divisibility.append(
                    name
                )  # the JIT sees aligned tensors (torch allocations are 16-byte aligned)
            elif (name in unit_strides and signature[name] in INT_TYPES and name not in kernel.do_not_specialize
                  and OUTER_STRIDE not in fact.source):  # the launch shows an outer dimension: no unit stride
                # the innermost stride of a contiguous tensor, as real launches pass it: the JIT's constant 1
                signature[name] = "constexpr"
                constants[name] = 1
                provenance[name] = f"{fact.source}; {ASSUMED_UNIT_STRIDE}"
            elif signature[name] in INT_TYPES and name not in kernel.do_not_specialize:
                # No visible value: compile the variant most launches get (sizes and strides are usually
                # multiples of 16). Findings that depend on the value say so; a pragma gives the real one.
                divisibility.append(name)
                provenance[name] = f"{fact.source}; {ASSUMED_DIVISIBLE}"
    spec = Specialization(
        kernel=kernel.name,
        label=label,
        signature=signature,
        constants=constants,
        divisibility=tuple(divisibility),
        options=dict(options),
        provenance=provenance,
        missing=tuple(missing),
        line=line,
        shown=shown_values,
    )
    if not guess:
        return spec
    fitted = fit_guesses(kernel.node, spec)  # guesses that satisfy the kernel's own shapes
    return _rederived(fitted, derived) if fitted is not spec else spec


def _derived_fact(kernel: SpecKernel, name: str, tied: Fact, chosen: Mapping[str, Fact]) -> Fact:
    """A constexpr the launch computes from other parameters (`next_power_of_2(N)`): computed from their values,
    a guess when any of them is one; a typical guess when they have none."""
    assert tied.derived is not None
    values = {n: f.value for n, f in chosen.items() if f.value is not UNKNOWN}
    value = derived_value(tied.derived, values)
    how = f"{ast.unparse(tied.derived)} at the launch ({tied.source})"
    bases = relation_bases(tied.derived)
    if value is UNKNOWN:  # computed from runtime sizes no launch shows: from their typical values, said so
        unseen = [b for b in bases if b not in values]
        typical = {b: typical_value(kernel.node, b, kernel.module_functions) for b in unseen}
        value = derived_value(tied.derived, {**values, **typical})
        if value is UNKNOWN or not unseen:
            return Fact(ASSUMED_TYPICAL, value=typical_value(kernel.node, name, kernel.module_functions))
        taken = ", ".join(f"{b} taken as {v!r}" for b, v in typical.items())
        return Fact(f"{ASSUMED_TYPICAL}; {LAUNCH_NOTE} {how}, whose {', '.join(unseen)} no launch shows "
                    f"({taken}, a typical size)", value=value)
    if any(chosen[b].source.startswith(ASSUMED_TYPICAL) for b in bases if b in chosen):
        return Fact(f"{ASSUMED_TYPICAL}; {LAUNCH_NOTE} {how}, of the guessed {', '.join(bases)}", value=value)
    return Fact(f"{tied.source}: {ast.unparse(tied.derived)}", value=value)


def _rederived(spec: Specialization, derived: Mapping[str, Fact]) -> Specialization:
    """After fit_guesses moved a guess: the values the launch computes from it, computed again."""
    constants = dict(spec.constants)
    for name, tied in derived.items():
        value = derived_value(tied.derived, constants) if tied.derived is not None else UNKNOWN
        if value is not UNKNOWN and name in constants:
            constants[name] = value
    return replace(spec, constants=constants) if constants != spec.constants else spec


def _heuristics(kernel: SpecKernel, chosen: dict[str, Fact], replaceable: tuple[str, ...]) -> None:
    """`@triton.heuristics` values from every value known so far (constexprs, literal runtime args; a tensor
    argument is known not to be None), over facts whose source starts with one of `replaceable`."""
    env = {
        n: f.value if f.value is not UNKNOWN else NOT_NONE
        for n, f in chosen.items()
        if f.value is not UNKNOWN or (f.type or "").startswith("*")
    }
    for name, (fn, hline) in kernel.heuristics.items():
        if name in chosen and not chosen[name].source.startswith(replaceable):
            continue
        args_name = fn.args.args[0].arg if fn.args.args else None
        value = evaluate(fn.body, env, args_name)
        if value is not UNKNOWN and value is not NOT_NONE:
            chosen[name] = Fact(f"heuristics at line {hline}", value=value)
            env[name] = value


def _specialize_value(
    name: str,
    fact: Fact,
    kernel: SpecKernel,
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
