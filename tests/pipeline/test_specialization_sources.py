"""Specialization from each source, with provenance, and the priority between sources."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.core.findings import Severity
from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, assumed_constexprs, specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"

ADD = """
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
"""


def src(*parts: str) -> str:
    return HEADER + "".join(textwrap.dedent(p) for p in parts)


def line_of(source: str, needle: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), start=1) if needle in text)


def only(specs: list) -> object:
    assert len(specs) == 1, [s.label for s in specs]
    return specs[0]


def test_pragma_gives_values_and_types() -> None:
    source = src("# tritonlens: BLOCK_SIZE=1024, x_ptr=*fp16, n_elements=i32\n", ADD)
    spec = only(specializations(source, "add_kernel"))
    pragma_line = line_of(source, "# tritonlens:")
    assert spec.constants == {"BLOCK_SIZE": 1024}
    assert spec.signature["BLOCK_SIZE"] == "constexpr"
    assert spec.signature["x_ptr"] == "*fp16"
    assert spec.signature["n_elements"] == "i32"
    assert spec.provenance["BLOCK_SIZE"] == f"pragma line {pragma_line}"
    assert spec.provenance["x_ptr"] == f"pragma line {pragma_line}"
    assert spec.missing == ()
    assert spec.label == "defaults"
    # a type without a value: compiled as the common case (the JIT's variant for sizes divisible by 16)
    assert "x_ptr" in spec.divisibility and "n_elements" in spec.divisibility
    assert spec.provenance["n_elements"] == f"pragma line {pragma_line}; {ASSUMED_DIVISIBLE}"


def test_pragma_between_decorators_and_trailing_options() -> None:
    source = src(
        """
        @triton.jit  # tritonlens: num_warps=2
        # tritonlens: BLOCK_SIZE=64
        def k(x_ptr, BLOCK_SIZE: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK_SIZE), 0.0)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.constants == {"BLOCK_SIZE": 64}
    assert spec.options == {"num_warps": 2}


def test_pyproject_table_and_pragma_priority() -> None:
    source = src("# tritonlens: BLOCK_SIZE=512\n", ADD)
    table = {"BLOCK_SIZE": 256, "x_ptr": "*bf16", "num_warps": 2}
    spec = only(specializations(source, "add_kernel", overrides=table))
    assert spec.constants["BLOCK_SIZE"] == 512  # the pragma sits at the kernel: it wins
    assert spec.signature["x_ptr"] == "*bf16"
    assert spec.provenance["x_ptr"] == "pyproject.toml [tool.tritonlens.kernels.add_kernel]"
    assert spec.options == {"num_warps": 2}
    spec = only(specializations(src(ADD), "add_kernel", overrides=table))
    assert spec.constants["BLOCK_SIZE"] == 256


def test_launch_site_literals_names_and_dtypes() -> None:
    source = src(
        ADD,
        """
        def add(x: torch.Tensor):
            y = torch.empty(4096, device="cuda", dtype=torch.float16)
            out = torch.empty_like(y)
            n = x.numel()
            BLOCK = 1024
            add_kernel[(triton.cdiv(n, BLOCK),)](x.half(), y, out, n, BLOCK_SIZE=BLOCK, num_warps=4)
        """,
    )
    spec = only(specializations(source, "add_kernel"))
    launch = line_of(source, "add_kernel[(")
    assert spec.label == f"launch at line {launch}"
    assert spec.signature == {
        "x_ptr": "*fp16",
        "y_ptr": "*fp16",
        "out_ptr": "*fp16",
        "n_elements": "i32",
        "BLOCK_SIZE": "constexpr",
    }
    assert spec.constants == {"BLOCK_SIZE": 1024}
    assert spec.options == {"num_warps": 4}
    # n's value is unknown: compiled as the common case, and the provenance says so (this used to expect
    # no hint, which made every such kernel report unvectorized masked accesses)
    assert set(spec.divisibility) == {"x_ptr", "y_ptr", "out_ptr", "n_elements"}
    assert spec.provenance["n_elements"].endswith(ASSUMED_DIVISIBLE)
    assert spec.provenance["y_ptr"].startswith(f"launch at line {launch}: torch.empty at line")
    assert "dtype fp16" in spec.provenance["y_ptr"]
    assert "empty_like" in spec.provenance["out_ptr"]
    assert spec.provenance["BLOCK_SIZE"] == f"launch at line {launch}"


def test_numeric_limits_passed_are_floats_or_ints() -> None:
    # `torch.finfo(q.dtype).min` as a masking value: a Python float (the kernel body gave no type; it was guessed i32)
    kernel = """
        @triton.jit
        def fill(out_ptr, n, lo, hi, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.where(offs % 2 == 0, lo, hi), mask=offs < n)
        """
    launch = """
        def run(x):
            fill[(1,)](x, x.numel(), torch.finfo(x.dtype).min, torch.iinfo(torch.int32).max, BLOCK=128)
        """
    spec = only(specializations(src(kernel, launch), "fill"))
    assert spec.signature["lo"] == "fp32" and spec.signature["hi"] == "i32"
    assert "numeric limit" in spec.provenance["lo"]


def test_launch_literal_ints_follow_the_jit() -> None:
    source = src(
        ADD,
        """
        if __name__ == "__main__":
            a = torch.randn(4096)
            add_kernel[(4,)](a, a, a, 4096, 1024)
            add_kernel[(4,)](a, a, a, 1, 1024)
            add_kernel[(4,)](a, a, a, 1000, 1024)
        """,
    )
    specs = specializations(source, "add_kernel")
    assert len(specs) == 3
    divisible, one, other = specs
    assert divisible.signature["n_elements"] == "i32" and "n_elements" in divisible.divisibility
    assert "divisible by 16" in divisible.provenance["n_elements"]
    assert one.signature["n_elements"] == "constexpr" and one.constants["n_elements"] == 1
    assert other.signature["n_elements"] == "i32" and "n_elements" not in other.divisibility
    assert divisible.signature["x_ptr"] == "*fp32"  # torch.randn's default dtype
    assert "torch's default dtype fp32" in divisible.provenance["x_ptr"]


def test_do_not_specialize_keeps_the_int() -> None:
    source = src(
        """
        @triton.jit(do_not_specialize=["n"])
        def k(x_ptr, n, B: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, B), n)

        k[(1,)](torch.empty(8), 1, 8)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.signature["n"] == "i32" and "n" not in spec.constants
    assert "n" not in spec.divisibility  # never specialized, so never assumed divisible either


def test_unknown_ints_without_values_follow_the_common_case() -> None:
    source = src(
        """
        @triton.jit(do_not_specialize=["seed"])
        def k(x_ptr, n, stride, seed, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(x_ptr + offs * stride, seed, mask=offs < n)

        k[(1,)](torch.empty(8), 1000, 1, 7, 8)

        def run(x):
            k[(1,)](x, x.numel(), 32, 7, 8)
        """
    )
    odd, unknown = specializations(source, "k")
    assert "n" not in odd.divisibility and odd.constants["stride"] == 1  # visible values: as the JIT does
    assert "n" in unknown.divisibility and unknown.provenance["n"].endswith(ASSUMED_DIVISIBLE)
    assert "stride" in unknown.divisibility and "divisible by 16" in unknown.provenance["stride"]
    assert "seed" not in odd.divisibility and "seed" not in unknown.divisibility


def test_autotune_configs_are_variants_and_heuristics_are_evaluated() -> None:
    source = src(
        """
        @triton.autotune(
            configs=[
                triton.Config({"BLOCK": 64}, num_warps=4),
                triton.Config({"BLOCK": 96}, num_warps=8, num_stages=3),
            ],
            key=["n"],
        )
        @triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            if EVEN:
                tl.store(x_ptr + offs, 1.0)
            else:
                tl.store(x_ptr + offs, 1.0, mask=offs < n)

        k[(1,)](torch.empty(4096), 4096)
        """
    )
    specs = specializations(source, "k")
    launch = line_of(source, "k[(1,)]")
    assert [s.label for s in specs] == [
        f"launch at line {launch}, autotune config 1",
        f"launch at line {launch}, autotune config 2",
    ]
    first, second = specs
    assert first.constants == {"BLOCK": 64, "EVEN": True} and first.options == {"num_warps": 4}
    assert second.constants == {"BLOCK": 96, "EVEN": False}
    assert second.options == {"num_warps": 8, "num_stages": 3}
    heur_line = line_of(source, "triton.heuristics")
    assert first.provenance["EVEN"] == f"heuristics at line {heur_line}"
    config_line = line_of(source, '{"BLOCK": 64}')
    assert first.provenance["BLOCK"] == f"autotune config 1 (line {config_line})"


def test_heuristic_over_unknown_value_is_a_labeled_guess() -> None:
    source = src(
        """
        @triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
        @triton.jit
        def k(x_ptr, n, EVEN: tl.constexpr):
            if EVEN:
                tl.store(x_ptr, 1.0)

        def f(x):
            k[(1,)](x, x.numel())
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.complete and spec.constants["EVEN"] is False
    assert spec.provenance["EVEN"] == ASSUMED_TYPICAL
    findings = specialization_findings(source, "k", [spec])
    assert [(f.code, f.severity) for f in findings] == [("TL002", Severity.HINT)]
    assert "assumed values EVEN=False" in findings[0].message and "tritonlens record" in findings[0].message
    assert '"# tritonlens: EVEN=<bool>"' in findings[0].message


def test_defaults_are_used() -> None:
    source = src(
        """
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr = 128, ACT: tl.constexpr = "relu"):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.constants == {"BLOCK": 128, "ACT": "relu"}
    assert spec.provenance["BLOCK"] == "default"
    assert spec.complete


def test_types_inferred_from_the_body() -> None:
    source = src(
        """
        @triton.jit
        def gather(src, idx_ptr, out, n, stride, scale, BLOCK: tl.constexpr = 64):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            idx = tl.load(idx_ptr + offs, mask=offs < n)
            v = tl.load(src + idx * stride)
            tl.store(out + offs, (v * scale).to(tl.float16))
        """
    )
    spec = only(specializations(source, "gather"))
    assert spec.signature["src"] == "*fp32"
    assert spec.signature["idx_ptr"] == "*i64"
    assert spec.signature["out"] == "*fp16"
    assert spec.signature["n"] == "i32"
    assert spec.signature["stride"] == "i32"
    assert spec.signature["scale"] == "fp32"
    load_line = line_of(source, "v = tl.load")
    assert spec.provenance["src"].startswith(f"inferred from tl.load at line {load_line}")
    assert "used as offsets" in spec.provenance["idx_ptr"]
    assert "stored at line" in spec.provenance["out"]
    assert spec.provenance["n"].startswith("inferred from the comparison")


def test_recorded_launches_win() -> None:
    source = src(
        "# tritonlens: BLOCK_SIZE=64\n",
        ADD,
        """
        add_kernel[(1,)](torch.empty(8), torch.empty(8), torch.empty(8), 8, BLOCK_SIZE=8)
        """,
    )
    recorded = [
        {"kernel": "other", "signature": {}, "constants": {}},
        {
            "kernel": "add_kernel",
            "signature": {
                "x_ptr": "*bf16",
                "y_ptr": "*bf16",
                "out_ptr": "*bf16",
                "n_elements": "i32",
                "BLOCK_SIZE": "constexpr",
            },
            "constants": {"BLOCK_SIZE": 2048},
            "divisibility": ["x_ptr", "out_ptr", "n_elements"],
            "options": {"num_warps": 8, "num_stages": 2},
            "grid": [30, 1, 1],
        },
    ]
    spec = only(specializations(source, "add_kernel", recorded=recorded))
    assert spec.label == "recorded launch 1"
    assert spec.constants == {"BLOCK_SIZE": 2048}
    assert spec.signature["x_ptr"] == "*bf16"
    assert spec.divisibility == ("x_ptr", "out_ptr", "n_elements")
    assert spec.options == {"num_warps": 8, "num_stages": 2}
    assert set(spec.provenance.values()) == {"recorded launch 1"}


def test_unknown_constexprs_are_guessed_and_the_hint_says_what_to_add() -> None:
    source = src(
        """
        @triton.jit
        def k(x_ptr, n, BLOCK_SIZE: tl.constexpr, USE_MASK: tl.constexpr):
            offs = tl.arange(0, BLOCK_SIZE)
            if USE_MASK:
                tl.store(x_ptr + offs, 0.0, mask=offs < n)
        """
    )
    specs = specializations(source, "k")
    assert only(specs).constants == {"BLOCK_SIZE": 64, "USE_MASK": False}
    assert assumed_constexprs(only(specs)) == {"BLOCK_SIZE": 64, "USE_MASK": False}
    (finding,) = specialization_findings(source, "k", specs)
    assert finding.code == "TL002" and finding.severity == Severity.HINT
    assert finding.kernel == "k"
    assert '"# tritonlens: BLOCK_SIZE=<int>, USE_MASK=<bool>" above the kernel' in finding.message
    def_line = line_of(source, "def k(")
    assert (finding.span.line, finding.span.col, finding.span.end_col) == (def_line, 4, 5)
    assert finding.data["insert_line"] == def_line - 1


def test_configs_from_another_module_are_named_as_unread_not_absent() -> None:
    # `@autotune(configs=_fwd_configs)` imported from a helper module (check 3, latkins/trifast): the hint said
    # "nothing shows them" although the configs exist
    source = src(
        """
        from .tuning import FWD_CONFIGS

        @triton.autotune(configs=FWD_CONFIGS, key=["n"])
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
        """
    )
    specs = specializations(source, "k")
    (finding,) = specialization_findings(source, "k", specs)
    assert "autotune configs are not written in this file" in finding.message, finding.message
    assert "nothing shows them" not in finding.message


def test_the_hint_asks_for_a_dtype_where_the_kernel_uses_the_constexpr_as_one() -> None:
    source = src(
        """
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr, dtype: tl.constexpr, ACC: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            acc = tl.zeros((BLOCK,), dtype=ACC)
            tl.store(x_ptr + offs, (acc + tl.load(x_ptr + offs)).to(dtype))
        """
    )
    (finding,) = specialization_findings(source, "k", specializations(source, "k"))
    assert '"# tritonlens: BLOCK=<int>, dtype=tl.<dtype>, ACC=tl.<dtype>" above the kernel' in finding.message


def test_no_tl002_when_some_variant_is_complete() -> None:
    source = src(ADD, "add_kernel[(1,)](torch.empty(8), torch.empty(8), torch.empty(8), 8, BLOCK_SIZE=8)\n")
    specs = specializations(source, "add_kernel")
    assert [f.code for f in specialization_findings(source, "add_kernel", specs)] == []


def test_bad_pragma_and_unknown_names_are_reported() -> None:
    source = src("# tritonlens: BLOCK_SIZE=big, BLCK=4, oops\n", ADD)
    specs = specializations(source, "add_kernel", overrides={"NOPE": 1})
    findings = specialization_findings(source, "add_kernel", specs, overrides={"NOPE": 1})
    codes = sorted(f.code for f in findings)
    assert codes == ["TL002", "TL003", "TL003", "TL003", "TL003"]
    messages = " | ".join(f.message for f in findings)
    assert "BLOCK_SIZE: 'big' is neither a literal" in messages
    assert "expected NAME=VALUE, got 'oops'" in messages
    assert "'BLCK', which is not a parameter of add_kernel" in messages
    assert "sets 'NOPE'" in messages
    pragma_line = line_of(source, "# tritonlens:")
    blck = next(f for f in findings if "BLCK" in f.message)
    assert (blck.span.line, blck.span.col, blck.span.end_col) == (pragma_line, 30, 34)


def test_layout_of_visible_tensors_and_callers() -> None:
    source = src(
        """
        @triton.jit
        def mm(a_ptr, c_ptr, M, K, stride_am, stride_ak, stride_cm, B: tl.constexpr):
            offs = tl.arange(0, B)
            a = tl.load(a_ptr + offs[:, None] * stride_am + offs[None, :] * stride_ak)
            tl.store(c_ptr + offs[:, None] * stride_cm + offs[None, :], a, mask=offs[:, None] < M)

        def run(a):
            M, K = a.shape
            c = a.new_empty(a.shape)
            mm[(1,)](a, c, M, K, a.stride(0), a.stride(1), c.stride(0), B=32)

        if __name__ == "__main__":
            x = torch.randn(100, 48, dtype=torch.bfloat16)
            run(x)
        """
    )
    spec = only(specializations(source, "mm"))
    call_line = line_of(source, "run(x)")
    assert spec.signature["a_ptr"] == "*bf16" and spec.signature["c_ptr"] == "*bf16"
    assert f"(passed as a at line {call_line})" in spec.provenance["a_ptr"]
    # M = 100 (not divisible by 16), K = 48, row strides 48, innermost strides 1 (specialized to constants)
    assert spec.signature["M"] == "i32" and "M" not in spec.divisibility
    assert spec.signature["K"] == "i32" and "K" in spec.divisibility
    assert spec.signature["stride_am"] == "i32" and "stride_am" in spec.divisibility
    assert spec.signature["stride_cm"] == "i32" and "stride_cm" in spec.divisibility
    assert spec.signature["stride_ak"] == "constexpr" and spec.constants["stride_ak"] == 1
    assert "assumed contiguous" in spec.provenance["stride_ak"]


def test_an_outer_stride_passed_visibly_is_not_taken_for_the_innermost() -> None:
    # The kernel indexes the last dimension implicitly and gets the three outer strides of a rank-4 tensor; by
    # its name `stride_xn` is the last of x's strides, but the launch shows it is `x.stride(2)`, not 1.
    source = src(
        """
        @triton.jit
        def k(x_ptr, stride_xz, stride_xh, stride_xn, n, B: tl.constexpr):
            offs = tl.arange(0, B)
            base = x_ptr + tl.program_id(0) * stride_xz + tl.program_id(1) * stride_xh
            tl.store(base + offs[:, None] * stride_xn + offs[None, :], 1.0, mask=offs[:, None] < n)

        def run(x):
            b, h, n, d = x.shape
            k[(b, h)](x, x.stride(0), x.stride(1), x.stride(2), n, B=64)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.signature["stride_xn"] == "i32" and "stride_xn" not in spec.constants, spec.provenance
    assert "an outer dimension's stride of a rank-4 tensor" in spec.provenance["stride_xn"]
    hidden = source.replace("x.stride(0), x.stride(1), x.stride(2)", "*x.stride()[:3]")
    assert only(specializations(hidden, "k")).constants.get("stride_xn") == 1  # nothing visible: by its name


def test_transposed_views_are_not_assumed_contiguous() -> None:
    source = src(
        """
        @triton.jit
        def k(a_ptr, s0, s1, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(a_ptr + offs * s0 + offs * s1, 1.0)

        def run(a: torch.Tensor):
            M, K = a.shape
            b = a.t()
            k[(1,)](b, b.stride(0), b.stride(1), B=16)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.signature["s0"] == "i32" and spec.signature["s1"] == "i32"
    assert spec.constants == {"B": 16}


def test_a_transpose_of_a_known_shape_has_the_transposed_strides() -> None:
    # `a.T` of a contiguous (64, 32) tensor has strides (1, 64); read as `a` itself it claimed (32, 1): the kernel
    # compiled with a unit stride on the axis that really strides by 64.
    launch = """
        def run():
            a = torch.empty(64, 32, device="cuda")
            b = {view}
            k[(1,)](b, b.stride(0), b.stride(1), B=16)
        """
    kernel = """
        @triton.jit
        def k(a_ptr, s0, s1, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(a_ptr + offs * s0 + offs * s1, 1.0)
        """
    for view in ("a.T", "a.mT", "a.t()", "a.transpose(0, 1)", "a.permute(1, 0)", "a.swapaxes(-1, -2)"):
        spec = only(specializations(src(kernel, launch.format(view=view)), "k"))
        assert spec.constants == {"s0": 1, "B": 16}, (view, spec.constants)
        assert "s1" in spec.divisibility and "view" in spec.provenance["s1"], (view, spec.provenance)
    spec = only(specializations(src(kernel, launch.format(view="a.T.contiguous()")), "k"))
    assert spec.constants == {"s1": 1, "B": 16} and "(32, 64)" in spec.provenance["s0"]
    spec = only(specializations(src(kernel, launch.format(view="torch.empty(n, m).T")), "k"))
    assert spec.constants == {"s0": 1, "B": 16}  # dims unknown, yet the transpose's stride(0) is 1
    for view in ("a.permute(*dims)", "a.expand(2, 64, 32)[0]", "a.view(64, 32).T"):  # not visible: not assumed
        spec = only(specializations(src(kernel, launch.format(view=view)), "k"))
        assert spec.constants == {"B": 16}, (view, spec.constants)


def test_results_of_matmuls_and_broadcasts_have_their_shapes() -> None:
    # A wrapper that computes part of the work in torch (`h = x @ w + b`) and launches on the result: the shape
    # follows torch's matmul and broadcasting rules, the dtype the one both operands share.
    kernel = """
        import torch.nn.functional as F

        @triton.jit
        def k(a_ptr, n, s0, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(a_ptr + offs * s0, 1.0, mask=offs < n)
        """
    launch = """
        def run():
            x = torch.randn(64, 128, dtype=torch.float16)
            w = torch.randn(128, 48, dtype=torch.float16)
            b = torch.randn(48, dtype=torch.float16)
            h = {expr}
            k[(1,)](h, h.numel(), h.stride(0), B=16)
        """
    for expr, shape in (("x @ w + b", "(64, 48)"), ("F.linear(x, w.T, b)", "(64, 48)"),
                        ("torch.nn.functional.linear(x, w.T)", "(64, 48)"), ("x.matmul(w)", "(64, 48)"),
                        ("x.mm(w) + b", "(64, 48)"), ("x.T.matmul(x)", "(128, 128)"),
                        ("torch.matmul(torch.randn(5, 1, 64, 128, dtype=torch.float16), w)", "(5, 1, 64, 48)"),
                        ("b[None, :] * (x @ w)", None), ("(x @ w) * b", "(64, 48)"),
                        ("torch.bmm(x.expand(3, 64, 128), w.expand(3, 128, 48))", None)):
        spec = only(specializations(src(kernel, launch.format(expr=expr)), "k"))
        assert spec.signature["a_ptr"] == "*fp16", (expr, spec.signature)
        if shape is None:  # an operand of unknown shape: neither numel nor strides are claimed
            assert "numel of a" not in spec.provenance["n"] and "s0" not in spec.constants, (expr, spec.provenance)
        else:
            assert f"numel of a {shape} tensor" in spec.provenance["n"], (expr, spec.provenance["n"])
    mixed = only(specializations(src(kernel, launch.format(expr="x @ w.float()")), "k"))
    assert "assumed" in mixed.provenance["a_ptr"], mixed.provenance  # mixed dtypes promote: a named guess


def test_conditional_expressions_take_the_branch_the_known_dtypes_decide() -> None:
    # `buf = out if out.dtype == torch.float32 else torch.empty_like(out, dtype=torch.float32)`: the dtype of out
    # is known, so is the branch; an undecided test gives a fact only where both branches agree
    kernel = """
        @triton.jit
        def k(a_ptr, n, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(a_ptr + offs, 1.0, mask=offs < n)
        """
    launch = """
        def run(flag):
            out = torch.empty(300, dtype=torch.{dtype})
            buf = {expr}
            k[(1,)](buf, buf.numel(), B=16)
        """
    fp32 = "out if out.dtype == torch.float32 else torch.empty_like(out, dtype=torch.float32)"
    for dtype, expr, want in (
        ("float16", fp32, "*fp32"), ("float32", fp32, "*fp32"),
        ("bfloat16", "out if out.dtype != torch.bfloat16 else out.float()", "*fp32"),
        ("float16", "out if not out.dtype == torch.float16 else out.float()", "*fp32"),
        ("float16", "out if flag else out.clone()", "*fp16"),  # undecided, both branches fp16
    ):
        spec = only(specializations(src(kernel, launch.format(dtype=dtype, expr=expr)), "k"))
        assert spec.signature["a_ptr"] == want, (dtype, expr, spec.signature)
        assert "assumed" not in spec.provenance["a_ptr"], (expr, spec.provenance)
    undecided = only(specializations(src(kernel, launch.format(dtype="float16", expr="out if flag else out.float()")), "k"))
    assert "assumed" in undecided.provenance["a_ptr"], undecided.provenance  # branches disagree: a named guess
    branches = """
        def run(flag):
            out = torch.empty(300, dtype=torch.float16)
            if flag:
                buf = out
            else:
                buf = out.float()
            k[(1,)](buf, buf.numel(), B=16)
        """
    spec = only(specializations(src(kernel, branches), "k"))
    assert "assumed: the branch bound last" in spec.provenance["a_ptr"], spec.provenance  # named, not a fact
    from tritonlens.analysis.compiler.variants import variant_guesses
    assert "a_ptr" in variant_guesses(spec)


def test_a_parameter_named_like_an_option_takes_the_pragma_value() -> None:
    # The fused-softmax tutorial's kernel has `num_stages: tl.constexpr`; TL002 tells the user to add
    # "# tritonlens: num_stages=<int>", which used to be swallowed as the compile option instead.
    source = src(
        """
        # tritonlens: BLOCK=64, num_stages=3, num_warps=2
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr, num_stages: tl.constexpr):
            for i in tl.range(0, n, BLOCK, num_stages=num_stages):
                tl.store(x_ptr + i + tl.arange(0, BLOCK), 0.0)
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.missing == ()
    assert spec.constants == {"BLOCK": 64, "num_stages": 3}
    assert spec.options == {"num_warps": 2}
    spec = only(specializations(source, "k", overrides={"num_stages": 4}))
    assert spec.constants["num_stages"] == 3  # the pragma still wins over pyproject


def test_warmup_calls_are_launch_sites() -> None:
    source = src(
        """
        @triton.jit
        def k(out_ptr, x_ptr, stride, n_cols, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            tl.store(out_ptr + cols, tl.load(x_ptr + tl.program_id(0) * stride + cols, mask=cols < n_cols))

        def run(x):
            n_rows, n_cols = x.shape
            y = torch.empty_like(x)
            compiled = k.warmup(y, x, x.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols), num_warps=8, grid=(1,))
            compiled[(n_rows, 1, 1)](y, x, x.stride(0), n_cols, 1024)

        run(torch.randn(64, 781))
        """
    )
    spec = only(specializations(source, "k"))
    assert spec.label == f"launch at line {line_of(source, 'k.warmup(')}"
    assert spec.constants == {"BLOCK": 1024} and spec.options == {"num_warps": 8}
    assert spec.signature["n_cols"] == "i32" and "n_cols" not in spec.divisibility  # 781: the real value


def test_wrapper_defaults_and_config_functions_as_in_the_matmul_tutorial() -> None:
    source = src(
        """
        def get_configs():
            return [triton.Config({"BM": 64}, num_warps=4), triton.Config({"BM": 128}, num_warps=8)]

        def pick_configs():
            if on_cuda():
                return get_configs()
            return []

        @triton.autotune(configs=pick_configs(), key=["n"])
        @triton.jit
        def k(x_ptr, n, BM: tl.constexpr, ACTIVATION: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BM), 0.0, mask=tl.arange(0, BM) < n)

        def run(x, activation=""):
            k[(1,)](x, x.numel(), ACTIVATION=activation)

        run(torch.empty(4096))
        """
    )
    specs = specializations(source, "k")
    assert [s.constants["BM"] for s in specs] == [64, 128]
    assert [s.options["num_warps"] for s in specs] == [4, 8]
    assert all(s.constants["ACTIVATION"] == "" and s.missing == () for s in specs)
    assert "default of activation" in specs[0].provenance["ACTIVATION"]


def test_missing_string_constexpr_gets_a_string_placeholder() -> None:
    source = src(
        """
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr, ACTIVATION: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            if ACTIVATION == "leaky_relu":
                x = tl.where(x >= 0, x, 0.01 * x)
            tl.store(x_ptr + tl.arange(0, BLOCK), x)
        """
    )
    (finding,) = specialization_findings(source, "k", specializations(source, "k"))
    assert "\\"  # tritonlens: BLOCK=<int>, ACTIVATION='<str>'\\"" in finding.message


def test_configs_built_by_a_helper_from_literal_lists_are_read() -> None:
    # a comprehension over literal lists, and a loop appending to a list: both compiled with their real values,
    # not guessed; the hint must not claim the configs are unreadable
    source = src(
        """
        import itertools

        SIZES = (256, 1024)

        def comp_configs():
            return [triton.Config({"TILE": t}, num_warps=w) for t in [256, 1024] for w in [4, 8]]

        def loop_configs():
            out = []
            for t, s in itertools.product(SIZES, [2, 3]):
                out.append(triton.Config({"TILE": t}, num_warps=4, num_stages=s))
            return out

        @triton.autotune(configs=comp_configs(), key=["n"])
        @triton.jit
        def ka(x_ptr, n, TILE: tl.constexpr):
            offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)

        @triton.autotune(configs=loop_configs(), key=["n"])
        @triton.jit
        def kb(x_ptr, n, TILE: tl.constexpr):
            offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
        """
    )
    a = specializations(source, "ka", limit=16)
    assert [(s.constants["TILE"], s.options["num_warps"]) for s in a] == [(256, 4), (256, 8), (1024, 4), (1024, 8)]
    config_line = line_of(source, 'triton.Config({"TILE": t}, num_warps=w)')
    assert a[0].provenance["TILE"] == f"autotune config 1 (line {config_line})"
    b = specializations(source, "kb", limit=16)
    assert [(s.constants["TILE"], s.options["num_stages"]) for s in b] == [(256, 2), (256, 3), (1024, 2), (1024, 3)]
    for name, specs in (("ka", a), ("kb", b)):
        assert not assumed_constexprs(specs[0])
        assert not [f for f in specialization_findings(source, name, specs) if "not written" in f.message]


def test_a_helper_that_narrows_its_configs_under_an_unknown_condition_offers_the_whole_list() -> None:
    # `if <runtime switch>: configs = configs[:1]`: the condition is not known here; the full list holds every
    # config a launch may use (the narrowed one is its prefix)
    source = src(
        """
        import os

        def tiles():
            out = []
            for t in [128, 512]:
                out.append(triton.Config({"TILE": t}, num_warps=4))
            if os.environ.get("QUICK_TUNE") == "1":
                out = out[:1]
            return out

        @triton.autotune(configs=tiles(), key=["n"])
        @triton.jit
        def k(x_ptr, n, TILE: tl.constexpr):
            offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
        """
    )
    assert [s.constants["TILE"] for s in specializations(source, "k")] == [128, 512]


def test_autotune_applied_later_as_a_call_to_a_jit_kernel_is_read() -> None:
    # `k = triton.autotune(configs=helper(), key=[...])(k)` after the `@triton.jit` def (under a `try`, as files
    # that tolerate older Triton do): the configs are the kernel's, not values to guess
    source = src(
        """
        WIDTHS = (32, 64)

        def width_configs():
            return [triton.Config({"W": w}) for w in WIDTHS]

        @triton.jit
        def k(x_ptr, n, W: tl.constexpr):
            offs = tl.program_id(0) * W + tl.arange(0, W)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)

        try:
            k = triton.autotune(configs=width_configs(), key=["n"])(k)
        except RuntimeError:
            pass
        """
    )
    specs = specializations(source, "k")
    assert [s.constants["W"] for s in specs] == [32, 64]
    assert not assumed_constexprs(specs[0])
