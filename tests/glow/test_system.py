"""The `glow` system end to end on the smoke preset with the embedded SmolLM2: every agent runs on a
generated game within its env-step budget, the tables and the curves are written, and a re-run on the
same folder resumes from runs.jsonl without playing again."""

from __future__ import annotations

import json

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system
from iclr26.glow import SYSTEM
from iclr26.glow.config import GlowConfig


def test_smoke_runs_every_agent_within_budget_and_resumes(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    agents = {"glow", "react", "reflexion", "random", "go_explore", "drrn", "oracle", "null"}
    assert {r["agent"] for r in runs} == agents
    for r in runs:
        budget = 100 if r["agent"] == "drrn" else 4
        assert r["steps_used"] <= budget and r["game_max_score"] == 1
        assert (r["llm_calls"] > 0) == (r["agent"] in ("glow", "react", "reflexion"))
    assert record.report.figures == ["curves.png"] and (run_dir / "curves.png").stat().st_size > 0
    summary = record.report.tables[0]
    assert {row[0] for row in summary.rows} == {r["agent"] for r in runs}
    validity = record.report.tables[2]
    assert validity.title.startswith("Suite validity") and [row[-1] for row in validity.rows] == ["valid"]
    oracle = [r for r in runs if r["agent"] == "oracle"]
    assert oracle[0]["max_score"] == 1 and oracle[0]["steps_used"] == 2  # go west, take coin
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert len((out / "runs.jsonl").read_text().splitlines()) == len(runs)  # nothing played twice
    assert again.report.tables[0].rows == summary.rows


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="agents"):
        GlowConfig(agents=("alphago",))
    with pytest.raises(ConfigError, match="ablations"):
        GlowConfig(ablations=("no_memory",))
    with pytest.raises(ConfigError, match="suite"):
        GlowConfig(suite="huge")
    with pytest.raises(ConfigError, match="step_budget"):
        GlowConfig(step_budget=0)


def test_the_validity_table_flags_a_game_the_oracle_cannot_win_or_null_wins() -> None:
    from iclr26.glow.system import _validity_table

    def row(agent: str, game: str, score: int) -> dict:
        return {"agent": agent, "game": game, "max_score": score, "game_max_score": 3, "steps_used": 5}

    runs = [row("oracle", "a", 3), row("null", "a", 0), row("oracle", "b", 2), row("null", "b", 0)]
    runs += [row("oracle", "c", 3), row("null", "c", 1), row("glow", "d", 1)]
    table = _validity_table(runs)
    assert [(r[0], r[-1]) for r in table.rows] == [("a", "valid"), ("b", "INVALID"), ("c", "INVALID")]
    assert _validity_table([row("glow", "a", 1)]) is None  # no reference rows: no table
