"""The H200 device script and its report: the crossover rule, the tables, and a `--check` run
(the script only runs on a lent GPU otherwise, so this is what keeps it from rotting)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCRIPTS = ROOT / "benchmarks" / "laplacianformer"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_lf_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def device():
    return _load("device_h200")


@pytest.fixture(scope="module")
def report():
    return _load("report_h200")


def _rows(method: str, ms: dict[int, float]) -> list[dict]:
    return [{"method": method, "tokens": n, "ms": t, "peak_mib": n / 1024} for n, t in ms.items()]


def test_crossover_is_the_length_from_which_faster_at_every_longer_one(device):
    ref = _rows("sdpa cudnn", {1024: 1.0, 2048: 2.0, 4096: 8.0, 8192: 32.0})
    assert (
        device.crossover(ref + _rows("a", {1024: 3.0, 2048: 1.0, 4096: 9.0, 8192: 4.0}), "a", "sdpa cudnn")
        == 8192
    )
    assert (
        device.crossover(ref + _rows("b", {1024: 0.5, 2048: 1.0, 4096: 1.0, 8192: 1.0}), "b", "sdpa cudnn")
        == 1024
    )
    assert device.crossover(ref + _rows("c", {1024: 5.0, 2048: 5.0, 4096: 50.0}), "c", "sdpa cudnn") is None
    # an errored length (no "ms") is not compared
    errored = [{"method": "d", "tokens": 8192, "error": "OutOfMemoryError"}]
    assert device.crossover(ref + _rows("d", {4096: 1.0}) + errored, "d", "sdpa cudnn") == 4096


def test_report_tables_name_errors_drops_and_crossover(report):
    result = {
        "sweep": _rows("laplacian (ours, triton)", {1024: 5.0, 2048: 6.0})
        + _rows("sdpa cudnn", {1024: 1.0})
        + [{"method": "sdpa cudnn", "tokens": 2048, "error": "OutOfMemoryError: ..."}]
        + [{"method": "sdpa cudnn", "dropped": "OutOfMemoryError at 2048 tokens"}],
        "crossover_reference": "sdpa cudnn",
        "crossover_vs_cudnn": {"laplacian (ours, triton)": None},
        "landmarks": 64,
        "kernel": [
            {
                "tokens": 4096,
                "landmarks": 64,
                "triton_ms": 0.1,
                "triton_gops": 1000.0,
                "cdist_ms": 1.0,
                "cdist_gops": 100.0,
                "max_abs_diff": 1e-3,
            }
        ],
        "vit": [
            {
                "image": 224,
                "patch": 16,
                "tokens": 196,
                "batch": 8,
                "attention": "softmax",
                "images_per_s": 300.0,
            },
            {
                "image": 224,
                "patch": 16,
                "tokens": 196,
                "batch": 8,
                "attention": "laplacian",
                "images_per_s": 100.0,
            },
        ],
    }
    md = report.tables(result)
    assert "| laplacian (ours, triton) | 5 | 6 |" in md
    assert "| sdpa cudnn | 1 | error |" in md
    assert "Not run at longer lengths: sdpa cudnn (OutOfMemoryError at 2048 tokens)" in md
    assert "Faster than cuDNN SDPA from (and at every longer length): laplacian (ours, triton): never." in md
    assert "| 4k | 0.1 | 1,000 | 1.0 | 100 | 1.0e-03 |" in md  # an older file: no relative difference
    assert "| 224² / patch 16 | 196 | 8 | 300 | 100 | 3.00 |" in md
    assert report.length(1024) == "1k" and report.length(256) == "256"


def test_check_run_writes_json_plots_and_report(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("TRITON_INTERPRET", None)  # the script sets it itself under --check
    run = subprocess.run(
        [sys.executable, str(SCRIPTS / "device_h200.py"), "--check", "--out", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "laplacianformer_h200.json",
        "memory_vs_length.png",
        "time_vs_length.png",
    ]
    result = json.loads((tmp_path / "laplacianformer_h200.json").read_text())
    timed = {r["method"] for r in result["sweep"] if "ms" in r}
    assert {
        "laplacian (ours, triton)",
        "linear elu+1 (unfused)",
        "nystromformer",
        "soft",
        "sdpa math",
    } <= timed
    assert any(r.get("method") == "sdpa cudnn" and "error" in r for r in result["sweep"])  # no cuDNN on a CPU
    assert result["crossover_reference"] == "sdpa math"
    (kernel,) = result["kernel"]
    assert kernel["max_rel_diff"] < 1e-5 and 0.1 < kernel["max_k"] <= 1  # Triton (interpreted) against cdist
    assert {v["attention"] for v in result["vit"] if "images_per_s" in v} == {"softmax", "laplacian"}
    md = subprocess.run(
        [sys.executable, str(SCRIPTS / "report_h200.py"), str(tmp_path / "laplacianformer_h200.json")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Faster than SDPA's math backend" in md and "softmax/Laplacian" in md
