"""`tritonlens profile`: offline on results saved from the H200, and end to end on the interpret backend."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.ascend_runner import protocol
from tritonlens.server.cli import main
from tritonlens.server.engine.profile.jobs import detect_harness, harness_spec

ROOT = Path(__file__).resolve().parents[2]
RUN1 = ROOT / "benchmarks" / "gpu" / "results" / "run1"
KB_COPY = ROOT / "benchmarks" / "gpu" / "kb_copy.py"
KB_ADD = ROOT / "tests" / "fixtures" / "run" / "kb_add.py"
SOFTMAX = ROOT / "tests" / "fixtures" / "run" / "script_softmax.py"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))


def test_saved_h200_result_text(capsys):
    assert main(["profile", str(KB_COPY), "--from-json", str(RUN1 / "profile_transpose.json")]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA H200" in out and "transpose_naive_kernel (line 25) grid [8192, 1, 1]" in out
    assert "kb_copy.py:25:1: TL202" in out
    assert "kb_copy.py:31:9: TL207" in out  # ncu CSV saved beside the JSON is read back
    assert "datasheet" in out  # no measured ceilings cached yet


def test_measured_ceilings_are_cached_per_device(capsys):
    assert main(["profile", str(KB_COPY), "--from-json", str(RUN1 / "profile_add.json")]) == 0
    assert "TL201" in capsys.readouterr().out
    assert (
        main(
            ["profile", str(KB_COPY), "--from-json", str(RUN1 / "profile_transpose.json"), "--format", "json"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert "measured" in data["report"]["device"]["memory_bandwidth"]  # from the add run's measurement
    assert [f["code"] for f in data["report"]["findings"]] == ["TL202", "TL207", "TL208"]
    assert "source_csv" not in data["result"]["ncu"]


def test_recorded_specialization_feeds_the_specializer():
    raw = json.loads((RUN1 / "profile_transpose.json").read_text())
    raw.pop("wall_s", None)  # added by bench_profile.py around the worker's result
    result = protocol.run_result_from(raw)
    (spec_dict,) = result.specializations()
    assert spec_dict["options"] == {"num_warps": 4, "num_stages": 3}  # as the compiler used them
    (spec,) = specializations(KB_COPY.read_text(), "transpose_naive_kernel", recorded=[spec_dict])
    assert spec.signature == {"in_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    assert spec.constants["BLOCK"] == 1024 and set(spec.divisibility) == {"in_ptr", "out_ptr", "n"}
    assert spec.label == "recorded launch 1"


def test_harness_detection():
    assert detect_harness(KB_ADD.read_text()) == "kernelbench"
    assert detect_harness(SOFTMAX.read_text()) == "script"
    assert detect_harness("def f(:") == "script"
    assert harness_spec("a.py", "", "mod:fn", [])["mode"] == "entry"


def test_bad_inputs(capsys, tmp_path):
    assert main(["profile", str(tmp_path / "missing.py")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["profile", str(KB_ADD), "--runner", "ftp://x"]) == 1
    assert "--runner must be" in capsys.readouterr().err
    # nothing listens on port 9: the remote client's message comes through, no traceback
    assert main(["profile", str(KB_ADD), "--runner", "http://127.0.0.1:9", "--token-env", "HOME"]) == 1
    assert "not reachable" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["profile", str(KB_ADD), "--from-json", str(bad)]) == 2


needs_env = pytest.mark.skipif(
    not (ROOT / ".envs" / "cuda" / "bin" / "python").exists(), reason="no cuda env"
)


@pytest.mark.cuda_env
@needs_env
def test_interpret_end_to_end(capsys, tmp_path):
    copy = tmp_path / "script_softmax.py"
    shutil.copy(SOFTMAX, copy)
    assert main(["profile", str(copy), "--backend", "interpret", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (launch,) = data["result"]["launches"]
    assert launch["kernel"] == "softmax_kernel" and launch["constants"] == {"BLOCK": 256}
    assert data["report"]["timing_meaningful"] is False and data["report"]["findings"] == []


@pytest.mark.cuda_env
@needs_env
def test_cuda_backend_without_gpu_fails_plainly(capsys):
    code = main(["profile", str(KB_ADD), "--backend", "cuda"])
    captured = capsys.readouterr()
    if "NVIDIA" in captured.out:
        pytest.skip("a GPU is present")
    assert code == 1 and "torch.cuda.is_available() is False" in captured.err
