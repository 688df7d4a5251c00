"""The H200 script for V³'s paper preset, run with `--check` on the CPU (tiny sizes, PyAV hidden as on the
GPU machine): the script only runs on a lent GPU otherwise, so this keeps it from rotting."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_check_run_trains_both_models_and_writes_the_tables(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "vff" / "device_h200.py"),
            "--check",
            "--out",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames.png", "report.md", "vff_h200.json"]
    result = json.loads((tmp_path / "vff_h200.json").read_text())
    assert result["status"] == "complete" and result["check"] and result["steps"] >= 2
    assert set(result["steps_per_s"]) == {"vff", "inr"} and all(v > 0 for v in result["steps_per_s"].values())
    assert result["config"]["encoder"] == "rvrt" and result["config"]["train"]["real_fraction"] > 0
    titles = [t["title"] for t in result["results"]["report"]["tables"]]
    assert any("held-out real clips" in t for t in titles) and any("validation" in t for t in titles)
    assert result["training"]["vff"]["validation"][0][0] == 0
