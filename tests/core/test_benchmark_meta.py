"""`benchmarks/_meta.run_preset_benchmark`: a benchmark's own `--set` defaults give way to the command
line's, and its `--tag` and `--out` defaults apply unless given."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def meta(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import _meta

    calls: dict = {}

    def run_system(system, preset, overrides, out, llm):
        calls.update(system=system, preset=preset, overrides=overrides, out=out)
        return "record", out

    def save(record, run_dir, results_dir, stem, preset, tag=""):
        calls.update(stem=stem, tag=tag)

    monkeypatch.setattr("iclr26.core.runner.run_system", run_system)
    monkeypatch.setattr(_meta, "save_preset_result", save)
    return _meta, calls


def test_the_command_line_replaces_the_benchmarks_own_sets(meta, monkeypatch):
    _meta, calls = meta
    monkeypatch.setattr(sys, "argv", ["x.py", "--set", "teach.caps=[]", "--set", "seed=3"])
    _meta.run_preset_benchmark(
        "sys", Path("r"), "stem", "d", ("experiment=teach", "teach.caps=[a:1]"), tag="t"
    )
    assert calls["overrides"] == {"experiment": "teach", "teach.caps": "[]", "seed": "3"}
    assert calls["tag"] == "t" and calls["out"] == Path("runs/benchmarks/stem") and calls["preset"] == "bench"


def test_tag_and_out_given_on_the_command_line_win(meta, monkeypatch):
    _meta, calls = meta
    monkeypatch.setattr(sys, "argv", ["x.py", "--tag", "mine", "--out", "elsewhere", "--preset", "smoke"])
    _meta.run_preset_benchmark("sys", Path("r"), "stem", "d", tag="t", out=Path("runs/other"))
    assert (calls["tag"], calls["out"], calls["preset"]) == ("mine", Path("elsewhere"), "smoke")


def test_a_field_given_twice_on_the_command_line_is_still_refused(meta, monkeypatch):
    from iclr26.core.config import ConfigError

    _meta, _ = meta
    monkeypatch.setattr(sys, "argv", ["x.py", "--set", "seed=1", "--set", "seed=2"])
    with pytest.raises(ConfigError, match="twice"):
        _meta.run_preset_benchmark("sys", Path("r"), "stem", "d")
