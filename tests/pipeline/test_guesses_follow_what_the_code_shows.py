"""A guess never stands in for what the code shows: the candidate literals of a launch conditional, a float
type, an equality the kernel or wrapper asserts, a value computed at the launch from another guess, and
integer element types of pointers whose loads reach an address through a reassigned local."""

from __future__ import annotations

import ast
import textwrap

from tritonlens.analysis.specialize.choose import assumed_constexprs, specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL
from tritonlens.analysis.specialize.infer import infer_types

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"

MIX = """
@triton.jit
def mix(a_ptr, b_ptr, c_ptr, MODE: tl.constexpr, T: tl.constexpr):
    r = tl.arange(0, T)
    a = tl.load(a_ptr + r[:, None] * T + r[None, :])
    b = tl.load(b_ptr + r[:, None] * T + r[None, :])
    tl.store(c_ptr + r[:, None] * T + r[None, :], tl.dot(a, b, input_precision=MODE))
"""


def src(*parts: str) -> str:
    return HEADER + "".join(textwrap.dedent(p) for p in parts)


def only(specs: list) -> object:
    assert len(specs) == 1, [s.label for s in specs]
    return specs[0]


def test_a_conditional_of_literals_at_the_launch_gives_its_candidates() -> None:
    source = src(MIX, """
        def go(a, b, c, fast):
            mix[(1,)](a, b, c, MODE="tf32" if fast else "ieee", T=32)
        """)
    spec = only(specializations(source, "mix"))
    assert spec.constants["MODE"] == "tf32"
    why = spec.provenance["MODE"]
    assert why.startswith(ASSUMED_TYPICAL) and "'tf32'" in why and "'ieee'" in why, why
    assert assumed_constexprs(spec) == {"MODE": "tf32"}
    (finding,) = specialization_findings(source, "mix", [spec])
    assert "MODE='<str>'" in finding.message and "'ieee'" in finding.message, finding.message


def test_a_string_keyword_of_a_tl_call_is_guessed_a_string() -> None:
    # nothing at a launch shows MODE: `input_precision=MODE` still says it is a string
    source = src(MIX)
    spec = only(specializations(source, "mix"))
    assert isinstance(spec.constants["MODE"], str)
    (finding,) = specialization_findings(source, "mix", [spec])
    assert "MODE='<str>'" in finding.message, finding.message


SCALE = """
@triton.jit
def scale(x_ptr, n, EPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x / (tl.sum(x * x) + EPS), mask=offs < n)
"""


def test_a_float_annotated_wrapper_parameter_makes_a_float_guess() -> None:
    source = src(SCALE, """
        def go(x, tiny: float):
            scale[(1,)](x, x.numel(), tiny, BLOCK=128)
        """)
    spec = only(specializations(source, "scale"))
    assert type(spec.constants["EPS"]) is float
    assert spec.provenance["EPS"].startswith(ASSUMED_TYPICAL)
    (finding,) = specialization_findings(source, "scale", [spec])
    assert "EPS=<float>" in finding.message, finding.message


def test_a_numeric_limit_at_the_launch_makes_a_float_guess() -> None:
    source = src(SCALE, """
        def go(x):
            scale[(1,)](x, x.numel(), EPS=torch.finfo(x.dtype).eps, BLOCK=128)
        """)
    spec = only(specializations(source, "scale"))
    assert type(spec.constants["EPS"]) is float and 0 < spec.constants["EPS"] < 1e-3
    assert "numeric limit" in spec.provenance["EPS"]


def test_a_float_default_of_the_wrapper_makes_a_float_guess() -> None:
    source = src(SCALE, """
        def go(x, tiny=1e-6):
            scale[(1,)](x, x.numel(), tiny, BLOCK=128)

        def outer(x, t):
            go(x, t)
        """)
    spec = only(specializations(source, "scale"))
    assert type(spec.constants["EPS"]) is float


ROWS = """
@triton.jit
def rows(x_ptr, W: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(W == 8)
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs * W, 0.0, mask=offs < W)
"""


def test_a_static_assert_in_the_kernel_states_the_value() -> None:
    spec = only(specializations(src(ROWS), "rows"))
    assert spec.constants["W"] == 8
    assert "static_assert at line" in spec.provenance["W"], spec.provenance["W"]
    assert not spec.provenance["W"].startswith(ASSUMED_TYPICAL)


def test_a_tl_assume_in_the_kernel_states_the_value() -> None:
    source = src(ROWS.replace("tl.static_assert(W == 8)", "tl.assume(8 == W)"))
    spec = only(specializations(source, "rows"))
    assert spec.constants["W"] == 8
    assert "tl.assume at line" in spec.provenance["W"], spec.provenance["W"]
    assert not spec.provenance["W"].startswith(ASSUMED_TYPICAL)


def test_an_assert_in_the_wrapper_states_the_value() -> None:
    kernel = ROWS.replace("    tl.static_assert(W == 8)\n", "")
    source = src(kernel, """
        def go(x, width: int):
            assert width == 16, "only 16"
            rows[(1,)](x, width, BLOCK=32)
        """)
    spec = only(specializations(source, "rows"))
    assert spec.constants["W"] == 16
    assert not spec.provenance["W"].startswith(ASSUMED_TYPICAL)
    assert "assert" in spec.provenance["W"]


GATHER = """
@triton.jit
def gather(src_ptr, out_ptr, COUNT: tl.constexpr, WIDTH: tl.constexpr):
    offs = tl.arange(0, WIDTH)
    v = tl.load(src_ptr + offs, mask=offs < COUNT)
    tl.store(out_ptr + offs, v, mask=offs < COUNT)
"""


def test_a_launch_relation_is_computed_from_the_guessed_value() -> None:
    through_a_name = """
        def go(s, o, count: int):
            width = triton.next_power_of_2(count)
            gather[(1,)](s, o, count, width)
        """
    inline = """
        def go(s, o, count: int):
            gather[(1,)](s, o, COUNT=count, WIDTH=triton.next_power_of_2(count))
        """
    for launch in (through_a_name, inline):
        spec = only(specializations(src(GATHER, launch), "gather"))
        count, width = spec.constants["COUNT"], spec.constants["WIDTH"]
        assert width == triton_next_power_of_2(count), (count, width)
        assert "next_power_of_2(COUNT)" in spec.provenance["WIDTH"], spec.provenance["WIDTH"]
        assert spec.provenance["WIDTH"].startswith(ASSUMED_TYPICAL)


def triton_next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def test_loads_that_reach_an_address_through_a_reassigned_local_are_integers() -> None:
    source = textwrap.dedent("""
        @triton.jit
        def shift(rows_ptr, extra_ptr, val_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            row = tl.load(rows_ptr + tl.program_id(0)).to(tl.int64)
            bump = tl.load(extra_ptr + tl.program_id(0))
            row = row + bump
            tl.store(out_ptr + row * stride + offs, tl.load(val_ptr + offs))
        """)
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    types = infer_types(fn, [a.arg for a in fn.args.args])
    assert types["extra_ptr"].type in ("*i32", "*i64"), types["extra_ptr"]
    assert types["val_ptr"].type == "*fp32"


DOT = """
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, TF32: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    a = tl.load(a_ptr + rm[:, None] * BN + rn[None, :])
    b = tl.load(b_ptr + rn[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, allow_tf32=TF32))
"""


def test_a_bool_keyword_of_a_tl_call_is_guessed_a_flag() -> None:
    # `allow_tf32=TF32`: a bool, whatever the name says (it was guessed a problem size, 1024)
    spec = only(specializations(src(DOT), "mm"))
    assert spec.constants["TF32"] is False
    assert spec.provenance["TF32"].startswith(ASSUMED_TYPICAL)


def test_launch_values_read_from_a_dict_literal_by_a_key_the_launch_cannot_decide() -> None:
    one = src(DOT, """
        def go(a, b, c):
            configs = {torch.bfloat16: {"BM": 128, "BN": 64, "TF32": False}}
            mm[(1,)](a, b, c, TF32=configs[a.dtype]["TF32"], BM=configs[a.dtype]["BM"], BN=configs[a.dtype]["BN"])
        """)
    spec = only(specializations(one, "mm"))
    # a single entry: any other key raises before the launch, so these are what every launch passes
    assert (spec.constants["BM"], spec.constants["BN"], spec.constants["TF32"]) == (128, 64, False)
    assert not assumed_constexprs(spec), spec.provenance
    two = src(DOT, """
        def go(a, b, c):
            tiles = {torch.float16: {"BM": 128}, torch.float32: {"BM": 32}}
            mm[(1,)](a, b, c, TF32=True, BM=tiles[a.dtype]["BM"], BN=64)
        """)
    spec = only(specializations(two, "mm"))
    # two entries: a choice, the first entry's value taken and named a guess
    assert spec.constants["BM"] == 128
    assert assumed_constexprs(spec) == {"BM": 128}
    assert "32" in spec.provenance["BM"], spec.provenance["BM"]
    keyed = src(DOT, """
        def go(a, b, c):
            tiles = {"small": {"BM": 16}, "large": {"BM": 128}}
            mm[(1,)](a, b, c, TF32=True, BM=tiles["large"]["BM"], BN=64)
        """)
    assert only(specializations(keyed, "mm")).constants["BM"] == 128  # a literal key picks its entry


COPY = """
@triton.jit
def copy(Q, O, N, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(Q + r, mask=r < N)
    tl.store(O + r, x, mask=r < N)
"""
WRAPPER = """
def go(q: torch.Tensor):
    q = q.contiguous()
    o = torch.empty_like(q)
    copy[(1,)](q, o, q.numel(), B=64)
"""


def test_an_output_made_like_an_input_takes_its_element_type() -> None:
    # the input's dtype is stated by a pragma; the output, `empty_like(q)`, is the same, not a second guess
    spec = only(specializations(src(COPY.replace("@triton.jit", "# tritonlens: Q=*fp16\n@triton.jit"), WRAPPER),
                                "copy"))
    assert (spec.signature["Q"], spec.signature["O"]) == ("*fp16", "*fp16")
    assert "made like Q" in spec.provenance["O"], spec.provenance["O"]
    explicit = WRAPPER.replace("torch.empty_like(q)", "torch.empty_like(q, dtype=torch.float32)")
    spec = only(specializations(src(COPY.replace("@triton.jit", "# tritonlens: Q=*fp16\n@triton.jit"), explicit),
                                "copy"))
    assert spec.signature["O"] == "*fp32"  # a dtype= of its own: not tied


def test_a_retry_that_changes_a_guessed_input_changes_the_output_made_like_it() -> None:
    from tritonlens.analysis.specialize.retry import retry_guess

    source = src(COPY, WRAPPER)
    spec = only(specializations(source, "copy"))
    assert (spec.signature["Q"], spec.signature["O"]) == ("*fp32", "*fp32")
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "tl.load(Q" in t)
    again = retry_guess(spec, source, "Both operands must be same dtype. Got fp16 and fp32", line)
    assert again is not None
    assert (again.signature["Q"], again.signature["O"]) == ("*fp16", "*fp16"), again.provenance


def test_a_conditional_with_one_shown_branch_gives_that_literal() -> None:
    # `1024 if D <= 1024 else next_power_of_2(D)` with D a tensor's dimension: the literal is what the code shows
    # (the other branch is at least as large), never "nothing shows them" and a typical 64
    source = src(SCALE, """
        def go(x, tiny: float):
            rows, d = x.shape
            block = 1024 if d <= 1024 else triton.next_power_of_2(d)
            scale[(rows,)](x, d, tiny, BLOCK=block)
        """)
    spec = only(specializations(source, "scale"))
    assert spec.constants["BLOCK"] == 1024
    why = spec.provenance["BLOCK"]
    assert why.startswith(ASSUMED_TYPICAL) and "1024 or a value not shown" in why, why
    (finding,) = specialization_findings(source, "scale", [spec])
    assert "BLOCK=1024" in finding.message and "nothing shows them" not in finding.message, finding.message
    assert "the other branch not shown" in finding.message, finding.message


BLOCKED_COPY = """
@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def test_a_clamped_launch_value_keeps_the_guess_within_its_bounds() -> None:
    # `hidden` is nothing the analysis can see: the guess is still no lower than the clamp's floor
    floor = only(specializations(src(BLOCKED_COPY, """
        def go(x, y, hidden):
            block = max(128, min(triton.next_power_of_2(hidden), 2048))
            copy[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK_SIZE=block)
        """), "copy"))
    assert floor.constants["BLOCK_SIZE"] == 128
    assert floor.provenance["BLOCK_SIZE"].startswith(ASSUMED_TYPICAL)
    assert "at least 128 and at most 2048" in floor.provenance["BLOCK_SIZE"]
    ceiling = only(specializations(src(BLOCKED_COPY, """
        def go(x, y, hidden):
            copy[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), BLOCK_SIZE=min(16, triton.next_power_of_2(hidden)))
        """), "copy"))
    assert ceiling.constants["BLOCK_SIZE"] == 16 and "at most 16" in ceiling.provenance["BLOCK_SIZE"]
    # a bound the typical value already meets leaves it, still labeled a guess
    loose = only(specializations(src(BLOCKED_COPY, """
        def go(x, y, hidden):
            copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK_SIZE=max(16, hidden))
        """), "copy"))
    assert loose.constants["BLOCK_SIZE"] == 64 and "at least 16" in loose.provenance["BLOCK_SIZE"]


ROW_COPY = """
@triton.jit
def rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols)
    tl.store(y_ptr + tl.program_id(0) * n_cols + cols, x, mask=cols < n_cols)
"""


def test_a_block_computed_from_a_runtime_size_is_computed_from_its_typical_value() -> None:
    # `next_power_of_2(n_cols)` of a size no launch shows: the relation still holds, over a typical size
    source = src(ROW_COPY, """
        def go(x):
            n_rows, n_cols = x.shape
            y = torch.empty_like(x)
            block = triton.next_power_of_2(n_cols)
            rows[(n_rows,)](x, y, n_cols, block)
        """)
    spec = only(specializations(source, "rows"))
    assert spec.constants["BLOCK"] == 1024
    note = spec.provenance["BLOCK"]
    assert note.startswith(ASSUMED_TYPICAL) and "next_power_of_2(n_cols)" in note and "n_cols taken as 1024" in note
    [tl002] = specialization_findings(source, "rows", [spec])
    assert "the code shows no single value for them" in tl002.message and "next_power_of_2(n_cols)" in tl002.message
