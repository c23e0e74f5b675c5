"""MLIR location parsing on real TTIR/TTGIR (named, call-site and file locations) and on hand-written forms."""

from __future__ import annotations

from cuda_cases import all_cases, load_case

from tritonlens.analysis.compiler.ir.mlir import line_map, parse_mlir
from tritonlens.analysis.compiler.ir.mlir_loc import LocTable, UserFiles


def test_every_fixture_op_with_a_loc_reaches_the_kernel_file() -> None:
    for name in all_cases():
        case = load_case(name)
        for stage in ("ttir", "ttgir"):
            module = parse_mlir(case.stages[stage])
            user = UserFiles([case.path])
            assert module.func_locs[case.kernel].frames[0].line == case.line(f"def {case.kernel}(")
            pairs = line_map(module, user)
            assert pairs, f"{name}/{stage}: no op mapped to the source"
            n_lines = len(case.source.splitlines())
            assert all(1 <= src <= n_lines for src, _ in pairs)
            # every mapped line lies inside the kernel's own body (the corpus has no helpers)
            def_line = case.line(f"def {case.kernel}(")
            assert all(src >= def_line for src, _ in pairs), name


def test_named_locations_carry_the_python_variable_name() -> None:
    case = load_case("add_good")
    module = parse_mlir(case.stages["ttir"])
    loads = [op for op in module.ops if op.name == "tt.load"]
    assert [op.loc.name for op in loads] == ["x", "y"]
    user = UserFiles([case.path])
    assert [op.loc.user_frame(user).line for op in loads] == [
        case.line("x = tl.load"),
        case.line("y = tl.load"),
    ]


def test_callsite_locations_charge_library_code_to_the_user_call() -> None:
    # tl.max / tl.sum are inlined from triton/language/standard.py; their ops carry callsite(...) locs.
    case = load_case("softmax_good")
    module = parse_mlir(case.stages["ttgir"])
    user = UserFiles([case.path])
    reduces = [op for op in module.ops if op.name == "tt.reduce"]
    assert [op.loc.user_frame(user).line for op in reduces] == [
        case.line("tl.max(x"),
        case.line("tl.sum(num"),
    ]
    combine = [op for op in module.ops if op.name == "arith.maxnumf"]
    assert combine and all("standard.py" in op.loc.frames[0].file for op in combine)
    assert all(op.loc.user_frame(user).line == case.line("tl.max(x") for op in combine)


def test_user_files_match_by_basename_but_never_library_files() -> None:
    user = UserFiles(["/home/me/softmax.py"])
    assert user("/tmp/worker-123/softmax.py")
    assert not user("/x/site-packages/triton/language/standard.py")
    assert not user("/home/me/other.py")


def test_function_arguments_and_divisibility() -> None:
    case = load_case("softmax_naive")  # stride_row and n_cols compiled without tt.divisibility
    module = parse_mlir(case.stages["ttir"])
    args = {a.name: a for a in module.funcs[case.kernel]}
    assert args["x_ptr"].divisibility == 16 and args["x_ptr"].type == "!tt.ptr<f32>"
    assert args["stride_row"].divisibility is None and args["n_cols"].divisibility is None


def test_loop_nesting_and_region_closing_locations() -> None:
    case = load_case("matmul_fp16")
    module = parse_mlir(case.stages["ttgir"])
    user = UserFiles([case.path])
    loop = next(op for op in module.ops if op.name == "scf.for")
    # scf.for prints its loc on the closing "} loc(...)" line
    assert loop.loc.user_frame(user).line == case.line("for _k in range")
    wgmma = [op for op in module.ops if op.name == "ttng.warp_group_dot"]
    assert wgmma and all(op.loops == (loop.ir_line,) for op in wgmma)
    stores = [op for op in module.ops if op.name == "tt.store"]
    assert stores and all(op.loops == () for op in stores)
    assert module.attributes["ttg.num-warps"] == "8"
    assert "nvidia_mma" in module.aliases["#mma"]


def test_fused_unknown_and_nested_forms() -> None:
    # Hand-written: Triton does not emit fused locs today, but other MLIR pipelines (and Ascend's) do.
    table = LocTable(
        {
            "#loc1": '"/a/k.py":3:4',
            "#loc2": "unknown",
            "#loc3": "fused[#loc2, #loc1]",
            "#loc4": 'callsite("/lib/std.py":9:1 at "x"(#loc1))',
            "#loc5": "#loc5",
        }
    )
    assert table.resolve("#loc3").frames[0].line == 3
    assert table.resolve("#loc2").frames == ()
    chain = table.resolve("#loc4")
    assert [f.file for f in chain.frames] == ["/lib/std.py", "/a/k.py"] and chain.name == "x"
    assert table.resolve("#loc5").frames == ()  # a cycle resolves to nothing instead of recursing forever
    assert table.resolve('fused<"meta">["/b/k.py":7:0]').frames[0].line == 7


def test_garbage_text_gives_an_empty_module() -> None:
    for text in ("", "not mlir at all {{{", "}}}}\n} loc(#loc9)\n%x = ", "#loc1 = loc(\n"):
        module = parse_mlir(text)
        assert module.ops == [] or all(op.loc.frames == () for op in module.ops)


def test_names_reused_in_sibling_loops_get_unique_definitions() -> None:
    # Real TTIR: the three loops of softmax_multipass all print %start, %cols, %cols_5, %x_9 ...
    case = load_case("softmax_multipass")
    module = parse_mlir(case.stages["ttir"])
    loops = [op for op in module.ops if op.name == "scf.for"]
    assert len(loops) == 3
    ivs = [loop.region_args[0] for loop in loops]
    assert ivs[0] == "start" and len(set(ivs)) == 3  # %start, %start$2, %start$3
    assert all(module.block_args[iv] == loop.ir_line for iv, loop in zip(ivs, loops, strict=True))
    assert loops[0].iter_args and loops[0].iter_args[0][0] == loops[0].region_args[1]
    defs = module.defs()
    loads = [op for op in module.ops if op.name == "tt.load" and op.loc.name == "x"]
    assert len(loads) == 3
    for load, loop in zip(loads, loops, strict=True):
        address = defs[load.operands[0]]
        assert loop.ir_line in address.loops  # the address of each pass is defined inside its own loop
        assert load.scope[: len(loop.scope)] == loop.scope and len(load.scope) == len(loop.scope) + 1
    result_names = [r for op in module.ops for r in op.results]
    assert len(result_names) == len(set(result_names))


def test_then_else_and_while_regions_scope_their_names() -> None:
    # Hand-written in the printer's form: sibling regions reuse %v; uses resolve to the visible definition.
    text = "\n".join(
        [
            "module {",
            "  tt.func public @k(%p: !tt.ptr<f32>, %c: i1) {",
            "    %r = scf.if %c -> (i32) {",
            "      %v = arith.constant 1 : i32",
            "      scf.yield %v : i32",
            "    } else {",
            "      %v = arith.constant 2 : i32",
            "      scf.yield %v : i32",
            "    }",
            "    %w:2 = scf.while (%a = %r, %b = %r) : (i32, i32) -> (i32, i32) {",
            "      %t = arith.cmpi slt, %a, %b : i32",
            "      scf.condition(%t) %a, %b : i32, i32",
            "    } do {",
            "    ^bb0(%a: i32, %b: i32):",
            "      %v = arith.addi %a, %b : i32",
            "      scf.yield %v, %b : i32, i32",
            "    }",
            "    tt.return",
            "  }",
            "}",
        ]
    )
    module = parse_mlir(text)
    yields = [op for op in module.ops if op.name == "scf.yield"]
    assert [y.operands[0] for y in yields] == ["v", "v$2", "v$3"]
    then_scope, else_scope = yields[0].scope, yields[1].scope
    assert then_scope != else_scope and then_scope[:-1] == else_scope[:-1]
    loop = next(op for op in module.ops if op.name == "scf.while")
    assert loop.region_args == ("a", "b") and loop.iter_args == (("a", "r"), ("b", "r"))
    cmp = next(op for op in module.ops if op.name == "arith.cmpi")
    assert cmp.operands == ("a", "b") and cmp.loops == (loop.ir_line,)
    add = next(op for op in module.ops if op.name == "arith.addi")
    assert add.operands == ("a$2", "b$2")  # the "do" block's own arguments
    assert module.block_args["a$2"] == loop.ir_line
    assert [a.name for a in module.funcs["k"]] == ["p", "c"]  # arguments keep their names
