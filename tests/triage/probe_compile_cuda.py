"""Compile one kernel of a file to TTIR/TTGIR with upstream Triton for sm_90 (no GPU needed).

Run by the cuda_env tests under the CUDA runner environment's Python (stdlib + triton only):
    python probe_compile_cuda.py '{"path": ..., "kernel": ..., "signature": {...}, "constexprs": {...}}'
Prints one JSON object: {"ok": true, "stages": {"ttir": ..., "ttgir": ...}} or {"ok": false, "error": ...}.
"""

import importlib.util
import json
import sys


def main() -> None:
    request = json.loads(sys.argv[1])
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        spec = importlib.util.spec_from_file_location("probe_module", request["path"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, request["kernel"])
        from triton.runtime.jit import JITFunction

        while not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
            fn = fn.fn  # unwrap @autotune / @heuristics
        source = ASTSource(fn, signature=request["signature"], constexprs=request.get("constexprs", {}))
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
        stages = {name: compiled.asm[name] for name in ("ttir", "ttgir") if name in compiled.asm}
        print(json.dumps({"ok": True, "stages": stages}))
    except Exception as exc:  # report any compiler error to the test as data
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))


if __name__ == "__main__":
    main()
