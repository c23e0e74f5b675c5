"""run / profile / verify jobs end to end on the interpret backend (TRITON_INTERPRET=1, CPU), through the worker
file run under the cuda environment's own Python, exactly as a runner starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.ascend_runner import protocol

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "ascend_runner" / "worker" / "run_job.py"
FIXTURES = ROOT / "tests" / "fixtures" / "run"
KB_ADD = str(FIXTURES / "kb_add.py")
SOFTMAX = str(FIXTURES / "script_softmax.py")


def env_python() -> str | None:
    explicit = os.environ.get("TRITONLENS_CUDA_PYTHON")
    if explicit:
        return explicit
    candidate = ROOT / ".envs" / "cuda" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


PYTHON = env_python()
pytestmark = [
    pytest.mark.cuda_env,
    pytest.mark.skipif(PYTHON is None, reason="cuda runner env (.envs/cuda) not installed"),
]


def job(kind: str, payload: dict, backend: str = "interpret") -> dict:
    proc = subprocess.run(
        [PYTHON, str(WORKER), kind, backend],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_kernelbench_launch_recorded_with_shapes_dtypes_constexprs(tmp_path):
    raw = job(
        "run",
        {
            "harness": {"mode": "kernelbench", "path": KB_ADD},
            "snapshot": True,
            "artifacts_dir": str(tmp_path),
        },
    )
    assert raw["ok"], raw["errors"]
    result = protocol.run_result_from(raw)  # the worker's dict follows the protocol dataclasses
    assert result.timing_meaningful is False
    (launch,) = result.launches
    assert launch.kernel == "add_kernel"
    assert launch.line == 11  # the def line, not the @triton.jit above it
    assert launch.grid == [4, 1, 1]  # cdiv(4000, 1024)
    assert launch.constants == {"BLOCK": 1024}
    assert launch.signature == {
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "out_ptr": "*fp32",
        "n_elements": "i32",
        "BLOCK": "constexpr",
    }
    # 4000 is a multiple of 16 and fresh allocations are aligned: the JIT specializes all four.
    assert sorted(launch.divisibility) == ["n_elements", "out_ptr", "x_ptr", "y_ptr"]
    args = {a.name: a for a in launch.args}
    assert args["x_ptr"].shape == [4000] and args["x_ptr"].dtype == "float32" and args["x_ptr"].strides == [1]
    assert args["x_ptr"].nbytes == 16000
    assert args["n_elements"].value == 4000
    assert args["out_ptr"].written is True and args["x_ptr"].written is False
    assert launch.snapshot and Path(launch.snapshot).exists()
    spec = result.specializations()[0]
    assert spec["options"] == {} and spec["grid"] == [4, 1, 1]  # the interpreter compiles nothing


def test_replay_one_launch_alone(tmp_path):
    raw = job(
        "run",
        {
            "harness": {"mode": "kernelbench", "path": KB_ADD},
            "snapshot": True,
            "artifacts_dir": str(tmp_path),
        },
    )
    snapshot = raw["launches"][0]["snapshot"]
    replay = job(
        "run", {"harness": {"mode": "kernelbench", "path": KB_ADD}, "replay": {"snapshot": snapshot}}
    )
    assert replay["ok"], replay["errors"]
    assert replay["replay"]["passed"] is True
    assert [c["arg"] for c in replay["replay"]["compared"]] == ["out_ptr"]
    assert replay["launches"][0]["kernel"] == "add_kernel"


def test_replay_detects_a_changed_kernel(tmp_path):
    raw = job(
        "run",
        {
            "harness": {"mode": "kernelbench", "path": KB_ADD},
            "snapshot": True,
            "artifacts_dir": str(tmp_path),
        },
    )
    snapshot = raw["launches"][0]["snapshot"]
    # The editor buffer now stores x - y: replaying the recorded launch against the new text must fail.
    edited = Path(KB_ADD).read_text().replace("x + y, mask=mask", "x - y, mask=mask")
    replay = job(
        "run",
        {
            "harness": {"mode": "kernelbench", "path": KB_ADD, "source": edited},
            "replay": {"snapshot": snapshot},
        },
    )
    assert replay["ok"], replay["errors"]
    assert replay["replay"]["passed"] is False


def test_script_launch_recorded():
    raw = job("run", {"harness": {"mode": "script", "path": SOFTMAX}})
    assert raw["ok"], raw["errors"]
    assert "softmax ok (48, 200)" in raw["stdout"]
    (launch,) = raw["launches"]
    assert launch["kernel"] == "softmax_kernel"
    assert launch["grid"] == [48, 1, 1]
    assert launch["constants"] == {"BLOCK": 256}
    assert launch["signature"]["in_ptr"] == "*fp16"
    strides = {a["name"]: a.get("value") for a in launch["args"]}
    assert strides["in_row_stride"] == 200 and strides["n_cols"] == 200
    assert "in_row_stride" not in launch["divisibility"]  # 200 is not a multiple of 16


def test_entry_point_and_repeated_launches_fold(tmp_path):
    entry_file = tmp_path / "entry_mod.py"
    entry_file.write_text(
        "import torch\nimport script_softmax as s\n\n"
        "def main():\n    x = torch.randn(4, 64)\n    for _ in range(3):\n        s.softmax(x)\n"
    )
    raw = job(
        "run",
        {"harness": {"mode": "entry", "path": str(FIXTURES / "x.py"), "entry": "entry_mod:main"}},
    )
    # entry modules are imported from the harness file's folder: entry_mod is not there
    assert raw["ok"] is False and "cannot import entry_mod" in raw["errors"][0]
    (tmp_path / "script_softmax.py").write_text(Path(SOFTMAX).read_text())
    raw = job("run", {"harness": {"mode": "entry", "path": str(entry_file), "entry": ":main"}})
    assert raw["ok"], raw["errors"]
    (launch,) = raw["launches"]
    assert launch["count"] == 3 and launch["grid"] == [4, 1, 1]


@pytest.mark.parametrize(
    ("candidate", "passed", "reason"),
    [
        ("ModelNew", True, ""),
        ("ModelHalfWritten", False, "never written"),
        ("ModelScaled", False, "outside atol"),
    ],
)
def test_verify(candidate, passed, reason):
    raw = job(
        "verify",
        {"harness": {"mode": "kernelbench", "path": KB_ADD}, "candidate": candidate, "seeds": [0, 1]},
    )
    assert raw["ok"], raw["errors"]
    result = protocol.verify_result_from(raw)
    assert result.passed is passed
    assert [c.seed for c in result.checks] == [0, 1]
    assert all(reason in c.reason for c in result.checks)
    assert result.speedup is None  # interpret timings are meaningless: no speedup claimed


def test_bad_inputs_give_plain_messages(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    raw = job("run", {"harness": {"mode": "script", "path": str(broken)}})
    assert raw["ok"] is False and "syntax error" in raw["errors"][0]
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    raw = job("run", {"harness": {"mode": "kernelbench", "path": str(plain)}})
    assert raw["ok"] is False and "missing Model, ModelNew" in raw["errors"][0]
    raw = job("run", {"harness": {"mode": "script", "path": str(plain)}})
    assert raw["ok"] is True and raw["errors"] == ["the harness ran but launched no Triton kernel"]
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('FAIL op: no module named mylib')\nsys.exit(1)\n")
    raw = job("run", {"harness": {"mode": "script", "path": str(failing)}})
    assert raw["ok"] is False and "exited with status 1" in raw["errors"][0]
    assert "no module named mylib" in raw["errors"][0]  # the script's own explanation comes with the status
    raw = job("run", {"harness": {"mode": "script", "path": str(plain)}}, backend="npu")
    assert raw["ok"] is False and "torch_npu" in raw["errors"][0]


AUTOTUNED = """
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit(do_not_specialize=["n"])
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x * s, mask=offs < n)


x = torch.randn(1000)
y = torch.empty_like(x)
scale_kernel[lambda m: (triton.cdiv(1000, m["BLOCK"]),)](x, y, 1000, 2.0)
assert torch.allclose(y, x * 2)
print("autotuned ok")
"""


def test_autotuned_kernel_runs_interpreted_without_a_gpu_driver(tmp_path):
    # the autotuner asked the (absent) GPU driver for a benchmarker: "0 active drivers"
    script = tmp_path / "autotuned.py"
    script.write_text(AUTOTUNED)
    raw = job("run", {"harness": {"mode": "script", "path": str(script)}})
    assert raw["ok"], raw["errors"]
    assert "autotuned ok" in raw["stdout"]
    # Both configs were benchmarked through the interpreter; only the launch the program ran with the chosen
    # config is recorded (trial launches would read as launches the program makes), and it counts the trials.
    (launch,) = raw["launches"]
    assert launch["kernel"] == "scale_kernel" and launch["constants"]["BLOCK"] in (64, 128)
    assert launch["autotune_trials"] == 2
    (record,) = protocol.run_result_from(raw).launches
    assert record.autotune_trials == 2 and record.module


LIBRARY_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def double(x):
    y = x.new_empty(x.shape)
    double_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y
"""


def test_replay_of_a_kernel_a_script_launched_from_its_package(tmp_path):
    # A script calling a library's op: the launch's kernel lives in mylib/ops.py, not in the script, so the
    # replay (ncu's, the timing's) imports it from its module as the script did.
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "ops.py").write_text(LIBRARY_KERNEL)
    script = tmp_path / "use_lib.py"
    script.write_text("import torch\nfrom mylib.ops import double\nassert (double(torch.ones(100)) == 2).all()\n")
    harness = {"mode": "script", "path": str(script)}
    raw = job("run", {"harness": harness, "snapshot": True, "artifacts_dir": str(tmp_path / "snaps")})
    assert raw["ok"], raw["errors"]
    (launch,) = raw["launches"]
    assert launch["module"] == "mylib.ops" and launch["file"].endswith("ops.py")
    replay = job("run", {"harness": harness, "replay": {"snapshot": launch["snapshot"]}})
    assert replay["ok"], replay["errors"]
    assert replay["replay"]["passed"] is True and replay["launches"][0]["kernel"] == "double_kernel"


def test_cuda_backend_without_gpu_says_so():
    probe = subprocess.run(
        [PYTHON, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True, text=True
    )
    if probe.stdout.strip() == "True":
        pytest.skip("a GPU is present: tests/runner/test_run_gpu.py covers this backend")
    raw = job("run", {"harness": {"mode": "kernelbench", "path": KB_ADD}}, backend="cuda")
    assert raw["ok"] is False and "torch.cuda.is_available() is False" in raw["errors"][0]


def test_protocol_validates_payloads():
    req = protocol.run_request_from(
        {"harness": {"mode": "script", "path": "a.py"}, "replay": {"snapshot": "s.pt"}}
    )
    assert isinstance(req.replay, protocol.ReplaySpec) and req.timing.rep_ms == 100.0
    with pytest.raises(protocol.ProtocolError, match="unknown harness mode"):
        protocol.run_request_from({"harness": {"mode": "notebook", "path": "a.py"}})
    with pytest.raises(protocol.ProtocolError, match="unknown field"):
        protocol.profile_request_from({"harness": {"mode": "script", "path": "a.py"}, "ncu_please": True})
    with pytest.raises(protocol.ProtocolError, match="kernelbench"):
        protocol.verify_request_from({"harness": {"mode": "script", "path": "a.py"}})
    assert protocol.profile_request_from({"harness": {"mode": "script", "path": "a.py"}, "ncu": True}).ncu
    with_backend = {"harness": {"mode": "kernelbench", "path": "a.py"}, "backend": "interpret"}
    assert protocol.verify_request_from(with_backend).backend == "interpret"
    job_env = protocol.new_job(
        "profile", "interpret", protocol.ProfileRequest(protocol.HarnessSpec("script", "a.py"))
    )
    assert job_env["payload"]["harness"]["mode"] == "script" and json.dumps(job_env)
    assert sys.modules.get("torch") is None  # the client side never imports torch


def test_a_module_of_a_package_imports_its_siblings_in_run_and_verify(tmp_path):
    # Liger's cross_entropy.py says `from liger_kernel.ops.utils import ...`: run as a module of its package, the
    # harness (and the gate's `.reference.py` copy beside it) must resolve that, and `from .util import` too.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    pkg = tmp_path / "mylib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("BLOCK = 1024\n")
    text = Path(KB_ADD).read_text().replace(
        "import triton.language as tl\n",
        "import triton.language as tl\n\nfrom mylib.util import BLOCK\nfrom .util import BLOCK as SAME_BLOCK\n",
    )
    text = text.replace("add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)",
                        "add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=SAME_BLOCK)")
    module = pkg / "kb_add.py"
    module.write_text(text)
    harness = {"mode": "kernelbench", "path": str(module)}
    raw = job("run", {"harness": harness})
    assert raw["ok"], raw["errors"]
    assert raw["launches"][0]["constants"] == {"BLOCK": 1024}
    raw = job("verify", {"harness": harness, "candidate": "ModelNew", "seeds": [0], "reference_source": text})
    assert raw["ok"], raw["errors"]
    assert protocol.verify_result_from(raw).passed is True
