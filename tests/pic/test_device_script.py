"""The H200 script for stacked PIC/EPIC training, run with `--check` on the CPU (toy data of the tasks'
shapes, gymnasium/MuJoCo/faiss hidden in the workers as on the GPU machine), then unpacked and evaluated
on MuJoCo: the script only runs on a lent GPU otherwise, so this keeps it from rotting."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_check_run_trains_every_stack_and_evaluates_every_run(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = ROOT / "benchmarks" / "pic" / "device_h200.py"
    run = subprocess.run(
        [sys.executable, str(script), "--check", "--out", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "device").iterdir()) == [
        "actors.pt",
        "pic_h200.json",
        "pic_h200_probe.json",
        "stacks",
    ]
    # each stack's JSON stays in `stacks/` (its actors are in actors.pt), and so does each probe's
    assert len(list((tmp_path / "device" / "stacks").glob("train_*.json"))) == 15  # 3 tasks × 5 algorithms
    assert not list((tmp_path / "device" / "stacks").glob("*.pt"))
    summary = json.loads((tmp_path / "device" / "pic_h200.json").read_text())
    assert summary["check"] and summary["steps_per_run"] >= 1
    assert {(r["task"], r["algorithm"]) for r in summary["records"]} == {
        (t, a)
        for t in ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5")
        for a in ("bc", "td3_bc", "iql", "pic", "epic")
    }
    assert all(len(r["runs"]) == 4 and r["run_updates_per_s"] > 0 for r in summary["records"])
    assert {r["steps"] for r in summary["records"]} == {summary["steps_per_run"]} == {4}  # --max-steps
    assert [b["runs"] for b in summary["stacked_48"]] == [4, 4]  # 2 datasets × 2 seeds in the check
    assert len(list((tmp_path / "unpacked" / "actors").glob("*.pt"))) == 15
    assert len(list((tmp_path / "cut_unpacked" / "actors").glob("*.pt"))) == 1  # a run cut off, unpacked
    assert "check passed" in run.stdout
