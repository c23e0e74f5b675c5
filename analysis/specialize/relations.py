"""Guessed constexprs and descriptor blocks that satisfy the relations a kernel states between them.

Guessed constexprs are chosen one by one (`specialization_guess`) and guessed descriptor blocks are 64 per
dimension (`specialization_infer`); a kernel whose shapes are tied together rejects such a set before Triton
ever reports which guess was wrong ("reshape() cannot change total number of elements"). `consistent_guesses`
keeps every value that is not a guess, derives guessed descriptor blocks from the relations that determine them
(`specialization_shapes`), and moves guessed integer constexprs to powers of two (the move that closes the
most gap first, the smallest change on a tie) until every relation holds with tiles under TILE_BUDGET; when no
such set is found the guesses stay as they were. `fit_guesses` applies it to a Specialization and says so in
its label and provenance. Pure: AST in, values out.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..source.safe_eval import UNKNOWN, evaluate
from .guess import ASSUMED_TYPICAL
from .infer import DESCRIPTOR_GUESS
from .shapes import Dim, Relations, desc_dim, live, relations
from .variant import Specialization

_CANDIDATES = tuple(2**i for i in range(11))  # 1 .. 1024
_MAX_ROUNDS = 24
_RESTARTS = (16, 64, 1)
# Bounds on the search (a generated kernel with hundreds of shapes must not stall levels 3-4): past these, the
# guesses stay as they were.
MAX_RELATIONS = 160
MAX_MOVABLE = 16
# Tiles of guesses stay well under Triton's element limit (2**20): a tile near it compiles for minutes.
TILE_BUDGET = 2**14
MAX_BLOCK_DIM = 256  # a tensor descriptor's block dimension (TMA's limit)
MIN_DOT_DIM = 16  # tl.dot's smallest tile dimension


def _value(dim: Dim, env: Mapping[str, Any]) -> Any:
    if isinstance(dim, ast.Name) and dim.id in env:
        return env[dim.id]
    value = evaluate(dim, env)
    return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN


def _product(dims: list[Dim], env: Mapping[str, Any]) -> Any:
    total = 1
    for d in dims:
        v = _value(d, env)
        if v is UNKNOWN:
            return UNKNOWN
        total *= v
    return total


def _unknown_dims(dims: list[Dim], env: Mapping[str, Any], free: set[str]) -> list[str]:
    return [d.id for d in dims if isinstance(d, ast.Name) and d.id in free and d.id not in env]


def derive_blocks(rel: Relations, env: dict[str, Any], free: set[str]) -> None:
    """Fill `env` with the guessed descriptor dims (`free`) that relations determine from known values."""
    progress = True
    while progress:
        progress = False
        for left, right, _, guard in rel.equal:
            if not live(guard, env):
                continue
            for side, other in ((left, right), (right, left)):
                unknown = _unknown_dims(side, env, free)
                if not unknown or _unknown_dims(other, env, free):
                    continue
                total = _product(other, env)
                rest = _product([d for d in side if not (isinstance(d, ast.Name) and d.id in unknown)], env)
                if total is UNKNOWN or rest is UNKNOWN or rest <= 0 or total % rest:
                    continue
                need = total // rest
                if len(unknown) == 1:
                    env[unknown[0]] = need
                else:  # a whole block reshaped: take the reshape's dims where the ranks agree
                    values = [_value(d, env) for d in other]
                    if len(values) == len(unknown) and UNKNOWN not in values and rest == 1:
                        env.update(zip(unknown, values, strict=True))
                    else:
                        env.update(zip(unknown, _spread(need, len(unknown)), strict=True))
                progress = True


def _spread(numel: int, rank: int) -> list[int]:
    """`rank` dims whose product is `numel`, the innermost filled first up to MAX_BLOCK_DIM each."""
    dims = [1] * rank
    for i in reversed(range(rank)):
        take = math.gcd(numel, MAX_BLOCK_DIM) if i else numel
        dims[i], numel = take, numel // take
    return dims


def _gap(left: Any, right: Any) -> float:
    if left is UNKNOWN or right is UNKNOWN:
        return 0.0
    if left <= 0 or right <= 0:
        return 0.0 if left == right else 12.0
    return abs(math.log2(left) - math.log2(right))


def _over_budget(numel: Any) -> float:
    return math.log2(numel / TILE_BUDGET) if numel is not UNKNOWN and numel > TILE_BUDGET else 0.0


def score(rel: Relations, env: Mapping[str, Any]) -> float:
    """How far `env` is from satisfying the relations (0: all hold; unknown values are not counted)."""
    total = 0.0
    for left, right, _, guard in rel.equal:
        if live(guard, env):
            sizes = (_product(left, env), _product(right, env))
            total += _gap(*sizes) + sum(_over_budget(n) for n in sizes)
    for dims, least in ((rel.positive, 1), (rel.dot_dims, MIN_DOT_DIM)):
        for dim, _, guard in dims:
            v = _value(dim, env)
            total += 12.0 if v is not UNKNOWN and v < least and live(guard, env) else 0.0
    for cond, _, guard in rel.true:
        v = evaluate(cond, env)
        total += 12.0 if v is not UNKNOWN and not v and live(guard, env) else 0.0
    return total


def consistent_guesses(
    fn: ast.FunctionDef,
    constants: Mapping[str, Any],
    guessed: list[str],
    descriptors: Mapping[str, list[int]],
    guessed_descriptors: list[str],
) -> tuple[dict[str, Any], dict[str, list[int]], dict[str, str], list[int]]:
    """(constants, descriptor blocks, descriptor element types, lines of the relations used) with the guessed
    ones (`guessed` constexprs, `guessed_descriptors`) changed so the kernel's own shape relations hold."""
    ranks = {d: len(b) for d, b in descriptors.items()}
    rel = relations(fn, ranks)
    free = {desc_dim(d, i) for d in guessed_descriptors for i in range(ranks[d])}
    if not rel.equal and not rel.true and not rel.positive and not rel.operand_dtypes:
        return dict(constants), {d: list(b) for d, b in descriptors.items()}, {}, []
    fixed = {
        desc_dim(d, i): v
        for d, b in descriptors.items()
        if d not in guessed_descriptors
        for i, v in enumerate(b)
    }
    named = {
        n.id
        for dims in [
            *(e[0] + e[1] for e in rel.equal),
            [p[0] for p in rel.positive],
            [t[0] for t in rel.true],
        ]
        for d in dims
        for n in ast.walk(d)
        if isinstance(n, ast.Name)
    }
    named |= {n for name in list(named) for n in _local_reads(fn).get(name, ())}
    movable = [
        n
        for n in guessed
        if n in named and isinstance(constants.get(n), int) and not isinstance(constants[n], bool)
    ]
    if len(rel.equal) + len(rel.positive) + len(rel.true) > MAX_RELATIONS or len(movable) > MAX_MOVABLE:
        movable = []  # too big to search in the time a compile request has: only derive descriptor blocks

    def settle(values: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
        env: dict[str, Any] = {**_locals(fn, values), **fixed}
        derive_blocks(rel, env, free)
        blocks = 0.0
        for d in guessed_descriptors:  # dims no relation determines keep their guess
            for i, v in enumerate(descriptors[d]):
                env.setdefault(desc_dim(d, i), v)
            blocks += _over_budget(math.prod(env[desc_dim(d, i)] for i in range(ranks[d])))
        return score(rel, env) + blocks, env

    def change(name: str, value: int) -> float:
        return abs(math.log2(value) - math.log2(constants[name])) if constants[name] > 0 else 1.0

    def descend(current: dict[str, Any]) -> tuple[float, dict[str, Any], dict[str, Any]]:
        best, env = settle(current)
        for _ in range(_MAX_ROUNDS):
            if best == 0:
                break
            moves = []
            for name in movable:
                for value in _CANDIDATES:
                    if value != current[name]:
                        moves.append((settle({**current, name: value})[0], change(name, value), name, value))
            if not moves or min(moves)[0] >= best:
                break
            _, _, name, value = min(moves)
            current[name] = value
            best, env = settle(current)
        return best, env, current

    # from the guesses first; when that descent sticks, from uniform starting points (a relation such as
    # `rep * 512 == BLOCK_M * (BLOCK_K // VEC)` can need two names to move at once from the guesses)
    best, env, current = descend(dict(constants))
    for start in _RESTARTS if best > 0 and movable else ():
        tried = descend({**constants, **{n: start for n in movable}})
        if tried[0] == 0 and (best > 0 or _distance(tried[2], constants) < _distance(current, constants)):
            best, env, current = tried
    dtypes: dict[str, str] = {}
    for desc, dtype, guard in rel.operand_dtypes:
        if desc in guessed_descriptors and live(guard, env):
            dtypes.setdefault(desc, dtype)
    if best > 0:  # no consistent set found: keep the guesses as they were
        return dict(constants), {d: list(b) for d, b in descriptors.items()}, dtypes, []
    blocks = {
        d: [int(env[desc_dim(d, i)]) for i in range(ranks[d])] if d in guessed_descriptors else list(b)
        for d, b in descriptors.items()
    }
    lines = sorted({r[2] for r in rel.equal if live(r[3], env)} | {r[1] for r in rel.true if live(r[2], env)})
    return current, blocks, dtypes, lines


def _distance(values: Mapping[str, Any], constants: Mapping[str, Any]) -> float:
    return sum(
        abs(math.log2(v) - math.log2(constants[n]))
        for n, v in values.items()
        if v != constants[n] and isinstance(v, int) and v > 0 and constants[n] > 0
    )


def _locals(fn: ast.FunctionDef, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` plus the kernel's own scalar assignments that evaluate with them (`HALF = BLOCK // 2`)."""
    env = dict(values)
    for node in fn.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id not in env:
                v = evaluate(node.value, env)
                if v is not UNKNOWN and isinstance(v, (int, bool)):
                    env[targets[0].id] = v
    return env


def _local_reads(fn: ast.FunctionDef) -> dict[str, set[str]]:
    """Kernel-local scalar name -> the names its top-level assignment reads (`HALF = BLOCK // 2`)."""
    out: dict[str, set[str]] = {}
    for node in fn.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, set()).update(
                        n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)
                    )
    return out


_DESCRIPTOR = re.compile(r"tensordesc<(\w+)\[([\d, ]+)\]>")


def fit_guesses(fn: ast.FunctionDef, spec: Specialization) -> Specialization:
    """`spec` with its guessed constexprs (ASSUMED_TYPICAL) and guessed descriptors (DESCRIPTOR_GUESS) made
    consistent with the kernel's shape relations; the label names the lines whose relations decided them."""
    guessed = [n for n, why in spec.provenance.items() if why == ASSUMED_TYPICAL]
    descriptors: dict[str, list[int]] = {}
    elements: dict[str, str] = {}
    for name, kind in spec.signature.items():
        m = _DESCRIPTOR.fullmatch(kind)
        if m:
            elements[name] = m.group(1)
            descriptors[name] = [int(d) for d in m.group(2).split(",")]
    guessed_descs = [d for d in descriptors if DESCRIPTOR_GUESS in spec.provenance.get(d, "")]
    if not guessed and not guessed_descs:
        return spec
    constants, blocks, dtypes, lines = consistent_guesses(
        fn, spec.constants, guessed, descriptors, guessed_descs
    )
    signature = dict(spec.signature)
    provenance = dict(spec.provenance)
    for d in guessed_descs:
        kind = f"tensordesc<{dtypes.get(d, elements[d])}[{', '.join(map(str, blocks[d]))}]>"
        if kind != signature[d]:
            signature[d] = kind
            why = "the element type its tl.dot_scaled format needs" if d in dtypes else ""
            fitted = " and ".join(
                w for w in (why, f"a block that fits the shapes at lines {lines}" if lines else "") if w
            )
            provenance[d] = f"{provenance[d]}; then {fitted}"
    if constants == spec.constants and signature == spec.signature:
        return spec
    where = (
        f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
        if lines
        else (
            "the element types its tl.dot_scaled formats need" if dtypes else "shape dimensions of at least 1"
        )
    )
    return replace(
        spec,
        signature=signature,
        constants=constants,
        provenance=provenance,
        label=f"{spec.label}, guesses fitted to the kernel's shapes ({where})",
    )
