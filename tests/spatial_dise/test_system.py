"""The `spatial_dise` system as a study: the bench's items are the units; the trained scorer is the
method, chance and the six pixel heuristics its floors (each a baseline of the claim), the verifier's
oracle passes every item and the null none, the paper's rows are references. End to end on the smoke
preset, a re-run resumes the splits, the scorer and every cell from `cells.jsonl`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.core.study import run_study
from iclr26.core.system import RunContext
from iclr26.spatial_dise import SYSTEM
from iclr26.spatial_dise.config import BASELINES, SpatialConfig
from iclr26.spatial_dise.dataset import GENERATOR
from iclr26.spatial_dise.items import LETTERS, QUADRANTS
from iclr26.spatial_dise.records import Record
from iclr26.spatial_dise.system import Bench, study


def _rows(record):
    table = record.report.tables[0]
    return {row[0]: row for row in table.rows}


def test_smoke_runs_and_resumes(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    rows = _rows(record)
    assert rows["oracle (verifier)"][1] == 100.0
    assert rows["null (no letter)"][1] == 0.0
    for name in ("random", "pixel_similarity", "odd_one_out", "option scorer (trained here)"):
        assert name in rows
    assert (run_dir / "examples.png").is_file()
    assert any(f.startswith("accuracy_by_quadrant") for f in record.report.figures)
    cells = (out / CELLS_FILE).read_text().splitlines()
    assert len(cells) == 20 * (len(BASELINES) + 3)  # 20 items x (scorer, floors, oracle, null)
    check = record.report.claim_check
    assert check.method == "scorer" and check.baseline in BASELINES and check.n == 20
    csv = out / "data" / "bench.csv"
    stamp = csv.stat().st_mtime_ns
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert _rows(again)["option scorer (trained here)"] == rows["option scorer (trained here)"]
    assert (out / "data" / "parts" / GENERATOR / "bench").is_dir() and csv.stat().st_mtime_ns >= stamp
    assert (out / CELLS_FILE).read_text().splitlines() == cells  # every cell resumed, none redone
    standard = next(t for t in again.report.tables if t.title.endswith("every arm, mean over units"))
    human = next(r for r in standard.rows if r[0] == "human (paper)")
    assert human[1].startswith("reference") and human[3] == pytest.approx(0.768)


def _records(n: int) -> list[Record]:
    return [
        Record(f"bench_{i}", "q", LETTERS[i % 4], f"{i}.png", "2d_rotation", "easy", QUADRANTS[i % 4], 1)
        for i in range(n)
    ]


class _Scripted(Bench):
    """A bench whose arms answer from a script: the scorer always right, every floor always 'A'."""

    def _answer_all(self, arm: str) -> list[str]:
        if arm in ("scorer", "oracle"):
            return [r.answer for r in self.records]
        return ["" if arm == "null" else "A" for _ in self.records]


def test_the_study_declares_floors_references_and_a_claim_against_every_floor(tmp_path) -> None:
    cfg = SpatialConfig(bench_items=20, train_items=40, val_items=10)
    s = study(cfg, _Scripted(cfg, _records(20), tmp_path))
    roles = {a.name: a.label for a in s.arms}
    assert roles["scorer"] == "method"
    assert roles["random"] == "floor (chance)" and roles["most_ink"] == "floor (pixel heuristic)"
    assert roles["oracle"] == "oracle" and roles["null"] == "null"
    (claim,) = s.claims
    assert claim.method == "scorer" and set(claim.baselines) == set(BASELINES)
    assert claim.floor_arm == "random" and claim.interval == "bootstrap"
    assert "human (paper)" in {r.name for r in s.references}  # shown, never a baseline
    assert [u.key for u in s.units] == [f"bench_{i}" for i in range(20)]


def test_the_claim_holds_against_floors_it_beats_and_is_uninformative_at_chance(tmp_path) -> None:
    cfg = SpatialConfig(bench_items=40, train_items=40, val_items=10, baselines=("random", "most_ink"))
    result = run_study(study(cfg, _Scripted(cfg, _records(40), tmp_path)), RunContext(out_dir=tmp_path))
    assert not result.invalid  # the oracle passed every item, the null none
    assert {c.baseline: c.verdict for c in result.checks} == {"random": "held", "most_ink": "held"}

    class _ScorerGuessesA(_Scripted):
        def _answer_all(self, arm: str) -> list[str]:
            return ["A"] * len(self.records) if arm == "scorer" else super()._answer_all(arm)

    other = tmp_path / "tie"
    other.mkdir()
    tie = run_study(study(cfg, _ScorerGuessesA(cfg, _records(40), other)), RunContext(out_dir=other))
    assert {c.verdict for c in tie.checks} == {"uninformative"}  # the chance floor's letters on every item
    arms = [json.loads(line)["arm"] for line in (other / CELLS_FILE).read_text().splitlines()]
    assert arms.count("scorer") == 40 and len(arms) == 40 * 5


def test_a_vlm_row_is_a_second_method_measured_on_vlm_items(tmp_path: Path) -> None:
    cfg = SpatialConfig(bench_items=20, train_items=0, vlm_row=True, vlm_items=5)
    s = study(cfg, Bench(cfg, _records(20), tmp_path))
    assert [a.name for a in s.arms if a.role == "method"] == ["vlm"]
    assert [c.method for c in s.claims] == ["vlm"]
    from iclr26.spatial_dise.system import measure

    assert measure(s.measure.args[0], s.arm("vlm"), s.units[7], RunContext(out_dir=tmp_path)) == {}


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="train_tasks: unknown task 'origami'"):
        SpatialConfig(train_tasks=("origami",))
    with pytest.raises(ConfigError, match="baselines"):
        SpatialConfig(baselines=("coin",))
    with pytest.raises(ConfigError, match="bench_items"):
        SpatialConfig(bench_items=0)
