"""Integer expressions over a kernel's index variables: affine in the iteration space, polynomial in its parameters.

An index such as `pid * BLOCK + tl.arange(0, BLOCK)` or `row * stride_xm + cols` is an `Affine`: a sum of index
variables (program ids, loop variables, lanes of `tl.arange`) each times a coefficient, plus a constant. Coefficients
and the constant are `Poly`s over the kernel's scalar parameters (`stride_xm`, `BLOCK`), because strides and sizes
are symbols until a launch says what they are. Anything else (a product of two index variables, a division, a
value loaded from memory) is not affine: the lifter records why instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Monomial = tuple[str, ...]  # sorted parameter names; () is the constant monomial


@dataclass(frozen=True)
class Poly:
    """A polynomial with integer coefficients over parameter names: {("stride_m",): 1, (): 4} is stride_m + 4."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def of(value: int | str) -> Poly:
        if isinstance(value, int):
            return Poly((((), value),)) if value else Poly()
        return Poly((((value,), 1),))

    def as_dict(self) -> dict[Monomial, int]:
        return dict(self.terms)

    @staticmethod
    def from_dict(d: dict[Monomial, int]) -> Poly:
        return Poly(tuple(sorted((m, c) for m, c in d.items() if c)))

    def __add__(self, other: Poly) -> Poly:
        d = self.as_dict()
        for m, c in other.terms:
            d[m] = d.get(m, 0) + c
        return Poly.from_dict(d)

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __mul__(self, other: Poly) -> Poly:
        d: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2))
                d[m] = d.get(m, 0) + c1 * c2
        return Poly.from_dict(d)

    @property
    def is_zero(self) -> bool:
        return not self.terms

    @property
    def constant(self) -> int | None:
        """The value when the polynomial has no parameter in it."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in self.terms:
            name = "*".join(m)
            if not name:
                parts.append(str(c))
            elif c == 1:
                parts.append(name)
            else:
                parts.append(f"{c}*{name}")
        return " + ".join(parts)


@dataclass(frozen=True)
class Affine:
    """sum(coefficient * index variable) + constant, with coefficients and constant over parameters."""

    coeffs: tuple[tuple[str, Poly], ...] = ()  # index variable -> coefficient, sorted by variable
    const: Poly = field(default_factory=Poly)

    @staticmethod
    def var(name: str) -> Affine:
        return Affine(((name, Poly.of(1)),))

    @staticmethod
    def constant(p: Poly) -> Affine:
        return Affine((), p)

    def as_dict(self) -> dict[str, Poly]:
        return dict(self.coeffs)

    @staticmethod
    def build(coeffs: dict[str, Poly], const: Poly) -> Affine:
        return Affine(tuple(sorted((v, c) for v, c in coeffs.items() if not c.is_zero)), const)

    def __add__(self, other: Affine) -> Affine:
        d = self.as_dict()
        for v, c in other.coeffs:
            d[v] = d[v] + c if v in d else c
        return Affine.build(d, self.const + other.const)

    def __neg__(self) -> Affine:
        return Affine(tuple((v, -c) for v, c in self.coeffs), -self.const)

    def scale(self, p: Poly) -> Affine:
        return Affine.build({v: c * p for v, c in self.coeffs}, self.const * p)

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.coeffs)

    @property
    def is_constant(self) -> bool:
        return not self.coeffs

    def coefficient(self, var: str) -> Poly:
        return self.as_dict().get(var, Poly())

    def __str__(self) -> str:
        parts = []
        for v, c in self.coeffs:
            k = c.constant
            parts.append(v if k == 1 else f"({c})*{v}")
        if not self.const.is_zero or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)
