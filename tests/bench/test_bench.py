"""`tritonlens bench`: task discovery, shards, resumable state, the distribution's numbers, and the command end to
end on the interpret backend (correctness only: nothing is timed or claimed faster there)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.server.engine.bench import state as bench_state
from tritonlens.server.engine.bench.summary import geomean, summarize, to_markdown
from tritonlens.server.engine.bench.tasks import find_tasks, is_task, parse_shard, shard

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def record(task: str, speedup: float, **extra) -> dict:
    base = {"task": task, "status": "done", "timing_meaningful": True, "speedup": speedup, "levels": [1],
            "producers": ["r"], "vs_eager": 2.0, "vs_compile": 0.5, "roofline_after": 0.5, "unseen_correct": True}
    return {**base, **extra}


def test_summary_is_the_whole_distribution():
    records = [record("a", 1.0, levels=[]), record("b", 3.0), record("c", 6.0, levels=[2, 4], vs_compile=1.5),
               record("d", 0.0, status="error", timing_meaningful=True), record("e", 9.0, timing_meaningful=False)]
    s = summarize(records)
    assert s["tasks"] == 5 and s["timed"] == 3 and s["errors"] == 1
    assert math.isclose(s["geomean_speedup"], (1 * 3 * 6) ** (1 / 3))
    assert s["median_speedup"] == 3.0
    assert s["above_2x"] == pytest.approx(2 / 3) and s["above_5x"] == pytest.approx(1 / 3)
    assert s["at_least_compile"] == pytest.approx(1 / 3)
    assert s["wins_by_level"] == {"1 triage": 1, "4 compiler": 1}
    text = to_markdown(s, records, {"command": "x"})
    assert "geometric mean 2.62x" in text and "| b |" in text


def test_a_roofline_fraction_past_the_footprint_guess_is_marked():
    records = [record("gather", 50.0, roofline_before=0.06, roofline_after=3.1), record("copy", 1.0)]
    text = to_markdown(summarize(records), records, {"command": "x"})
    assert "6% -> 310%* |" in text and "n/a -> 50% |" in text
    assert "footprint of the launch's tensor arguments" in text


def test_the_summary_says_where_verification_seconds_went():
    def step(**seconds: float) -> dict:
        return {"details": {"seconds": seconds}}

    optimize = {"rejected": [step(compile_check=4.0, verify_job=20.0, candidate=15.0), step(compile_check=6.0,
                                                                                        verify_job=30.0)],
                "applied": [step(compile_check=5.0, verify_job=10.0)], "device_wait_s": 12.5}
    records = [record("a", 2.0, optimize=optimize), record("b", 1.0, optimize={"device_wait_s": 3.0}), record("c", 1.0)]
    s = summarize(records)
    assert s["verifications_timed"] == 3 and s["device_wait_s"] == 15.5
    assert s["verification_seconds"] == {"compile_check": 5.0, "verify_job": 20.0, "candidate": 15.0}
    text = to_markdown(s, records, {"command": "x"})
    assert "(median of 3 with a record): compile_check 5.0 s, verify_job 20.0 s, candidate 15.0 s" in text
    assert "outside every task's budget: 16 s in all" in text


def test_geomean_ignores_missing_values():
    assert geomean([]) is None and geomean([4.0, None, 1.0]) == pytest.approx(2.0)


def test_tasks_shards_and_state(tmp_path):
    (tmp_path / "t1.py").write_text((ROOT / "bench" / "scan" / "cumsum.py").read_text())
    (tmp_path / "helper.py").write_text("def f():\n    return 1\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    tasks, problems = find_tasks([str(tmp_path), str(tmp_path / "absent")])
    assert [t.name for t in tasks] == ["t1.py"] and problems and "absent" in problems[0]
    assert not is_task("class Model: pass")
    assert parse_shard("2/3") == (2, 3)
    with pytest.raises(ValueError):
        parse_shard("4/3")
    paths = [Path(str(i)) for i in range(7)]
    assert [len(shard(paths, i, 3)) for i in (1, 2, 3)] == [3, 2, 2]
    assert sorted(p for i in (1, 2, 3) for p in shard(paths, i, 3)) == sorted(paths)
    state_file = tmp_path / "state.json"
    data = bench_state.load(state_file)
    data["tasks"]["x"] = {"speedup": 2.0}
    bench_state.save(state_file, data)
    assert bench_state.load(state_file)["tasks"]["x"]["speedup"] == 2.0
    state_file.write_text(json.dumps({"version": 99}))
    with pytest.raises(ValueError):
        bench_state.load(state_file)


@pytest.mark.cuda_env
def test_bench_end_to_end_on_the_cpu_then_resumed(tmp_path):
    if not (ROOT / ".envs" / "cuda" / "bin" / "python").exists() and not os.environ.get("TRITONLENS_CUDA_PYTHON"):
        pytest.skip("cuda runner env (.envs/cuda) not installed")
    report = tmp_path / "report"
    command = [str(BIN / "tritonlens"), "bench", str(ROOT / "bench" / "scan" / "cumsum.py"), "--backend",
               "interpret", "--budget", "candidates=1,rounds=1", "--no-config-search", "--report", str(report)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    data = json.loads((report / "bench-report.json").read_text())
    [task] = data["tasks"]
    assert task["status"] == "done" and task["baseline"]["correct"] and task["baseline"]["unseen_correct"]
    assert not task["timing_meaningful"] and "not timed" in task["miss"]  # interpret: nothing claimed faster
    assert data["summary"]["timed"] == 0 and (report / "bench-report.md").exists()
    prov = data["provenance"]
    assert prov["runner"]["kind"] == "local" and prov["versions"]["torch"] and prov["tritonlens"]["commit"] != ""
    assert prov["devices"][0]["name"].startswith("cpu") and "## Where it ran" in (report / "bench-report.md").read_text()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "0 to run (1 already in" in again.stderr, again.stderr[-2000:]
    redo = subprocess.run([*command, "--redo", "scan/cum*"], capture_output=True, text=True, timeout=600)
    assert redo.returncode == 0 and "1 to run (1 already in" in redo.stderr, redo.stderr[-2000:]
    assert "again (--redo scan/cum*)" in redo.stderr
    [task] = json.loads((report / "bench-report.json").read_text())["tasks"]
    assert task["previous"]["status"] == "done" and task["fingerprint"] == task["previous"]["fingerprint"]


def test_redo_takes_chosen_and_stale_tasks_again_and_keeps_the_others(tmp_path):
    a, b, c = (tmp_path / "cat" / f"{n}.py" for n in "abc")
    a.parent.mkdir()
    for path in (a, b, c):
        path.write_text(f"# task {path.stem}\n")
    tool = bench_state.tool_fingerprint()
    assert tool == bench_state.tool_fingerprint() and len(tool) == 16
    state = {"tasks": {str(a): {"status": "done", "speedup": 2.0, "fingerprint": bench_state.fingerprint(a, tool)},
                       str(b): {"status": "done", "speedup": 1.0, "fingerprint": bench_state.fingerprint(b, tool)}}}
    # plain resume: only the task not in the state
    assert bench_state.to_run([a, b, c], state, [], False, tool) == ([c], {})
    # chosen by a glob on the path or the file name
    todo, why = bench_state.to_run([a, b, c], state, ["*/cat/a.py"], False, tool)
    assert todo == [a, c] and why == {str(a): "--redo */cat/a.py"}
    assert bench_state.to_run([a, b, c], state, ["b.py"], False, tool)[0] == [b, c]
    # stale: the task's text changed, or the tool did; a record without a fingerprint is stale too
    b.write_text("# task b, edited\n")
    todo, why = bench_state.to_run([a, b, c], state, [], True, tool)
    assert todo == [b, c] and why == {str(b): "stale: the task changed"}
    todo, why = bench_state.to_run([a, b], state, [], True, "another-tool")
    assert todo == [a, b] and why[str(a)] == "stale: the tool changed"
    state["tasks"][str(a)].pop("fingerprint")
    assert bench_state.to_run([a], state, [], True, tool)[1] == {str(a): "stale: no fingerprint"}
    # a redone task keeps its earlier figures; the others are untouched
    bench_state.replace_record(state, str(b), {"status": "done", "speedup": 3.0})
    assert state["tasks"][str(b)]["previous"]["speedup"] == 1.0 and state["tasks"][str(a)]["speedup"] == 2.0


def test_a_terminated_bench_cancels_the_task_in_flight_and_still_writes_its_report(tmp_path):
    if not (ROOT / ".envs" / "cuda" / "bin" / "python").exists() and not os.environ.get("TRITONLENS_CUDA_PYTHON"):
        pytest.skip("cuda runner env (.envs/cuda) not installed")
    import signal
    import time

    report = tmp_path / "report"
    # a quick task, then one whose ModelNew sleeps in every call: the second is still in flight when the signal
    # comes, however late a loaded machine lets this test read its progress (a merely slow task once finished first)
    quick = (ROOT / "bench" / "activation" / "relu.py").read_text(encoding="utf-8")
    hangs = quick.replace("        out = torch.empty_like(x)\n", "        time.sleep(3600)\n        out = torch.empty_like(x)\n")
    assert hangs != quick
    (tmp_path / "a_relu.py").write_text(quick, encoding="utf-8")
    (tmp_path / "b_hangs.py").write_text("import time\n" + hangs, encoding="utf-8")
    tasks = [str(tmp_path / "a_relu.py"), str(tmp_path / "b_hangs.py")]
    command = [str(BIN / "tritonlens"), "bench", *tasks, "--backend", "interpret", "--budget",
               "candidates=4,rounds=2", "--no-config-search", "--report", str(report)]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    seen, finished, deadline = [], None, time.monotonic() + 500
    while time.monotonic() < deadline:  # one task at a time: progress of a second task means the first is done
        line = proc.stderr.readline()
        seen.append(line)
        if not line.startswith("  "):
            continue
        task = Path(line.split(": ")[0].strip()).name
        if finished is None:
            finished = task
        elif task != finished:
            break
    proc.send_signal(signal.SIGTERM)  # as `timeout` would
    out, err = proc.communicate(timeout=120)
    text = "".join(seen) + err
    assert proc.returncode == 143, text[-3000:]
    assert "stopped (SIGTERM)" in text
    data = json.loads((report / "bench-report.json").read_text())
    # the finished task only: the one in flight was cancelled, is not recorded, and runs again next time
    assert [(Path(t["task"]).name, t["status"]) for t in data["tasks"]] == [(finished, "done")], text[-3000:]
    state = json.loads((report / "bench-state.json").read_text())
    assert [Path(task).name for task in state["tasks"]] == [finished]
