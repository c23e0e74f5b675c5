"""Schedule: a nest of loops around a tl.dot accumulation (taps around channel blocks) -> one flat loop.

The emitter is `flat_loop.flatten` (why one loop helps, and when it declines). Where a tl.dot operand needs
packing, schedule-operand-relayout offers the packed operand first and then the flat loop over it, and this
schedule declines: on an H100 the flat loop alone was slower than the draft on both tap-loop convolutions it
reached (0.92x, 0.95x), packing alone the fastest (2.03x, 1.23x; bench/results/h100-blind8/), and on an H200 probe
the flat loop gained 6% alone and 30% over the packed operand (bench/results/h200-conv-probe/).
"""

from __future__ import annotations

from ..model import ANY_KERNEL
from ..recipe_kit import Decline, KernelSource, SourceRecipe
from . import operand_relayout
from .flat_loop import flatten


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    alone = flatten(recipe, ks)
    if isinstance(operand_relayout.RECIPE.propose(ks.ctx), list):
        raise Decline("a tl.dot operand here needs packing: schedule-operand-relayout offers the packed operand, "
                      "then this flat loop over it (on an H100 the flat loop alone was the slowest of the three forms)")
    return [alone]


RECIPE = SourceRecipe(
    name="schedule-loop-nest-flatten",
    title="Flatten the loops around a tl.dot accumulation into one loop (pipelined across the outer loops)",
    keys=(ANY_KERNEL, "TL307"),  # a loop the pipeliner left synchronous: evidence when found
    build=_build,
    summary="taps x channel-block loop nest around tl.dot -> one flat loop, indices decoded per iteration",
)
