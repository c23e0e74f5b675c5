"""Abstract values the lifter computes for each expression of a kernel."""

from __future__ import annotations

from dataclasses import dataclass, field

from .symbolic import Affine, Poly

Dims = tuple[str | None, ...]  # per tile axis: the lane variable along it, None for a broadcast (size-1) axis


@dataclass(frozen=True)
class Index:
    """An integer scalar or tile: affine over the iteration space, or not (then `why`)."""

    expr: Affine | None
    dims: Dims = ()
    why: str = ""
    data: bool = False  # computed from loaded values

    @staticmethod
    def of_poly(p: Poly) -> Index:
        return Index(Affine.constant(p))


@dataclass(frozen=True)
class BlockPtr:
    """`tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)`, advanced by `tl.advance`."""

    tensor: str
    strides: tuple[Poly, ...]
    offsets: tuple[Affine, ...]
    lanes: tuple[str, ...]  # one lane variable per block axis

    def offset(self) -> Affine:
        total = Affine()
        for stride, start, lane in zip(self.strides, self.offsets, self.lanes, strict=False):
            total = total + (start + Affine.var(lane)).scale(stride)
        return total


@dataclass(frozen=True)
class Descriptor:
    """`tl.make_tensor_descriptor(base, shape, strides, block_shape)`: `.load([i, j])` reads one block."""

    tensor: str
    strides: tuple[Poly, ...]
    block: tuple[str, ...]  # source text of each block size


@dataclass(frozen=True)
class Data:
    """Values loaded from memory and what was done to them."""

    sources: frozenset[str] = frozenset()  # tensors whose loads flow in
    ops: tuple[str, ...] = ()  # op names applied, oldest first (kept short)
    dims: Dims = ()
    products: frozenset[str] = frozenset()  # tensors whose loads were multiplied together into it
    carried: frozenset[str] = frozenset()  # loop-carried variables that flow in
    after_loop: tuple[str, ...] = ()  # ops applied after the loop that accumulated it (its epilogue)

    def then(self, op: str, **changes: object) -> Data:
        ops = (self.ops + (op,))[-12:]
        after = self.after_loop + (op,) if self.carried else self.after_loop
        return Data(**{**self.__dict__, "ops": ops, "after_loop": after, **changes})


@dataclass(frozen=True)
class Mask:
    """A comparison, used as a mask or a `tl.where` condition."""

    data: bool = False


@dataclass(frozen=True)
class Opaque:
    """A value the lifter does not model (a tuple, a string, a call it does not know)."""

    why: str = ""


@dataclass(frozen=True)
class Tuple:
    items: tuple[object, ...] = field(default=())


Value = Index | BlockPtr | Descriptor | Data | Mask | Opaque | Tuple
