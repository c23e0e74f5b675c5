"""Launches inside a `torch.autograd.Function`: a value `forward(ctx, ...)` keeps as `ctx.name = ...` is what a
launch in `backward(ctx, ...)` reading `ctx.name` gets (a fact when a literal, the candidates when a conditional
of literals, a labeled guess otherwise), and `Op.apply(a, b)` passes a and b to forward's parameters after
ctx, as a direct call of a wrapper would."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL
from tritonlens.analysis.specialize.launch import BRANCH_GUESS

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"

SHIFT = """
@triton.jit
def shift(x_ptr, y_ptr, n, MODE: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if WIDE:
        x = x * 2
    if MODE == "twice":
        x = x + x
    tl.store(y_ptr + offs, x, mask=offs < n)
"""


def src(*parts: str) -> str:
    return HEADER + "".join(textwrap.dedent(p) for p in parts)


def only(specs: list) -> object:
    assert len(specs) == 1, [s.label for s in specs]
    return specs[0]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def is_fact(why: str) -> bool:
    return not why.startswith(ASSUMED_TYPICAL) and BRANCH_GUESS not in why


def test_a_literal_kept_on_ctx_in_forward_is_a_fact_in_backward() -> None:
    source = src(SHIFT, """
        class Doubler(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.tile = 256
                ctx.wide = False
                return x * 2

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=ctx.wide, BLOCK=ctx.tile)
                return dx
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["BLOCK"] == 256 and spec.constants["WIDE"] is False
    why = spec.provenance["BLOCK"]
    assert is_fact(why) and "ctx.tile" in why and f"line {line_of(source, 'ctx.tile = 256')}" in why, why


def test_a_conditional_of_literals_kept_on_ctx_gives_its_candidates() -> None:
    source = src(SHIFT, """
        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, again):
                ctx.how = "twice" if again else "once"
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE=ctx.how, WIDE=False, BLOCK=128)
                return dx, None
        """)
    spec = only(specializations(source, "shift"))
    why = spec.provenance["MODE"]
    assert spec.constants["MODE"] in ("twice", "once")
    assert not is_fact(why) and "'twice'" in why and "'once'" in why, why


def test_ctx_kept_under_an_if_of_forward_merges_both_branches() -> None:
    source = src(SHIFT, """
        class Branchy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, again):
                if again:
                    ctx.how = "twice"
                else:
                    ctx.how = "once"
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE=ctx.how, WIDE=False, BLOCK=128)
                return dx, None
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["MODE"] in ("twice", "once")
    assert not is_fact(spec.provenance["MODE"]), spec.provenance["MODE"]


def test_an_expression_kept_on_ctx_stays_a_labeled_guess() -> None:
    source = src(SHIFT, """
        class Sized(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.tile = x.shape[-1]
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=False, BLOCK=ctx.tile)
                return dx
        """)
    spec = only(specializations(source, "shift"))
    assert not is_fact(spec.provenance["BLOCK"]), spec.provenance["BLOCK"]


def test_a_forward_parameter_kept_on_ctx_takes_what_apply_passes() -> None:
    source = src(SHIFT, """
        class Widened(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, tile, wide=False):
                ctx.tile = tile
                ctx.wide = wide
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=ctx.wide, BLOCK=ctx.tile)
                return dx, None, None

        def widened(x):
            return Widened.apply(x, 512, True)
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["BLOCK"] == 512 and spec.constants["WIDE"] is True
    why = spec.provenance["BLOCK"]
    assert is_fact(why) and f"line {line_of(source, 'Widened.apply(')}" in why, why


def test_apply_arguments_reach_a_launch_inside_forward_shifted_past_ctx() -> None:
    source = src(SHIFT, """
        class Forwarded(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, tile, how="once"):
                y = torch.empty_like(x)
                shift[(4,)](x, y, x.numel(), MODE=how, WIDE=False, BLOCK=tile)
                return y

            @staticmethod
            def backward(ctx, dy):
                return dy, None, None

        def forwarded(x):
            return Forwarded.apply(x.to(torch.float16), 64, "twice")
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["BLOCK"] == 64 and spec.constants["MODE"] == "twice"
    assert spec.signature["x_ptr"] == "*fp16", spec.signature["x_ptr"]
    assert is_fact(spec.provenance["BLOCK"]) and is_fact(spec.provenance["MODE"])
    assert f"line {line_of(source, 'Forwarded.apply(')}" in spec.provenance["x_ptr"], spec.provenance["x_ptr"]


def test_apply_bound_to_a_name_counts_as_a_call() -> None:
    source = src(SHIFT, """
        class Aliased(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, tile):
                y = torch.empty_like(x)
                shift[(4,)](x, y, x.numel(), MODE="once", WIDE=False, BLOCK=tile)
                return y

        aliased = Aliased.apply

        def use(x):
            return aliased(x, 32)
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["BLOCK"] == 32 and is_fact(spec.provenance["BLOCK"])


def test_ctx_read_inside_forward_itself_is_what_forward_set() -> None:
    source = src(SHIFT, """
        class Reread(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.again = True
                how = "twice" if ctx.again else "once"
                y = torch.empty_like(x)
                shift[(4,)](x, y, x.numel(), MODE=how, WIDE=False, BLOCK=64)
                return y
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["MODE"] == "twice" and is_fact(spec.provenance["MODE"]), spec.provenance["MODE"]


def test_a_buffer_kept_on_ctx_decides_an_is_not_none_test_in_backward() -> None:
    source = src(SHIFT, """
        class Buffered(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, acc=None):
                ctx.acc = acc
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=ctx.acc is not None, BLOCK=128)
                return dx, None

        def buffered(x):
            return Buffered.apply(x, torch.zeros(16))
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["WIDE"] is True and is_fact(spec.provenance["WIDE"]), spec.provenance["WIDE"]


def test_ctx_of_another_class_is_not_read() -> None:
    source = src(SHIFT, """
        class Keeps(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.tile = 256
                return x

        class Reads(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=False, BLOCK=ctx.tile)
                return dx
        """)
    spec = only(specializations(source, "shift"))
    assert not is_fact(spec.provenance["BLOCK"]), spec.provenance["BLOCK"]


def test_an_if_that_rebinds_the_name_it_tests_reads_the_earlier_value() -> None:
    # forward picks the mode from ctx, then overrides it under a test of the mode itself and of a dtype nothing
    # shows: the mode is known not "twice", so the `and` is False whatever the dtype, and the override never runs
    source = src(SHIFT, """
        class Picky(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, again=False):
                ctx.again = again
                how = "twice" if ctx.again else "once"
                if how == "twice" and x.dtype == torch.bfloat16:
                    how = "thrice"
                ctx.how = how
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE=ctx.how, WIDE=False, BLOCK=128)
                return dx, None

        def picky(x):
            return Picky.apply(x, False)
        """)
    spec = only(specializations(source, "shift"))
    assert spec.constants["MODE"] == "once" and is_fact(spec.provenance["MODE"]), spec.provenance["MODE"]


def test_a_test_over_a_value_from_an_undecided_branch_is_no_fact() -> None:
    # ctx.acc is None on one branch of an `if` nothing decides: `ctx.acc is not None` is a guess, not False
    source = src(SHIFT, """
        class Maybe(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, keep):
                if keep:
                    ctx.acc = torch.zeros_like(x)
                else:
                    ctx.acc = None
                return x

            @staticmethod
            def backward(ctx, dy):
                dx = torch.empty_like(dy)
                shift[(4,)](dy, dx, dy.numel(), MODE="once", WIDE=ctx.acc is not None, BLOCK=128)
                return dx, None
        """)
    spec = only(specializations(source, "shift"))
    assert not is_fact(spec.provenance["WIDE"]), spec.provenance["WIDE"]
