"""The transfer study (trained on one compare type, tested on each): the split, the arms and claims,
and a run on a release file written here, resumed from its cells."""

from __future__ import annotations

import json

import pytest

from iclr26.core.runner import run_system
from iclr26.lfqa_e import SYSTEM
from iclr26.lfqa_e.config import LFQAConfig
from iclr26.lfqa_e.data import Comparison, DataError
from iclr26.lfqa_e.transfer import (
    FLOORS,
    TransferBench,
    arm_name,
    claims,
    measure,
    transfer_split,
    transfer_study,
)


def _comps() -> list[Comparison]:
    """20 questions: the even ones have two human_vs_model and one model_vs_model comparison, the odd
    ones one model_vs_model; the human_vs_model labels are b, the model_vs_model ones a."""
    out = []
    for q in range(20):
        kinds = ["human_vs_model", "human_vs_model", "model_vs_model"] if q % 2 == 0 else ["model_vs_model"]
        for k, ctype in enumerate(kinds):
            label = "response_b" if ctype == "human_vs_model" else "response_a"
            out.append(Comparison(f"q{q}-{k}", f"question {q}", "r", "a", "b", label, ctype))
    return out


def test_the_split_keeps_questions_apart_and_trains_each_type_on_as_many_pairs():
    comps = _comps()
    train, test, before = transfer_split(comps, 0.5, seed=3)
    assert set(train) == {"human_vs_model", "model_vs_model"}
    assert len(train["human_vs_model"]) == len(train["model_vs_model"]) == min(before.values())
    assert before["human_vs_model"] != before["model_vs_model"]  # the larger type was subsampled
    for t, cs in train.items():
        assert {c.compare_type for c in cs} == {t}
    train_q = {c.question for cs in train.values() for c in cs}
    assert not train_q & {c.question for c in test}
    assert {c.compare_type for c in test} == {"human_vs_model", "model_vs_model"}
    assert transfer_split(comps, 0.5, seed=3) == (train, test, before)  # seeded
    with pytest.raises(DataError, match="needs two compare types"):
        transfer_split([c for c in comps if c.compare_type == "model_vs_model"], 0.5, seed=3)


def test_arms_pair_in_type_with_cross_type_and_floors_read_only_the_type():
    cfg = LFQAConfig(experiment="transfer", metrics=("trained_evaluator",))
    s = transfer_study(cfg, _comps())
    names = [a.name for a in s.arms]
    types = ("human_vs_model", "model_vs_model")
    assert names[:4] == [arm_name("trained_evaluator", t, y) for t in types for y in types]
    assert names[4:] == [f.name for f in FLOORS]
    # on human_vs_model: in-type vs cross-type, then cross-type and in-type against the floors
    first, cross, own = claims(["trained_evaluator"], types)[:3]
    in_type = "trained_evaluator:human_vs_model->human_vs_model"
    cross_type = "trained_evaluator:model_vs_model->human_vs_model"
    assert (first.method, first.baselines, first.floor_arm) == (in_type, (cross_type,), "majority")
    assert (cross.method, own.method) == (cross_type, in_type)
    assert cross.baselines == own.baselines == ("always_a", "coin_flip", "majority")
    assert len(s.claims) == 2 * 3
    train, test, _ = transfer_split(_comps(), cfg.train_share, cfg.seed)
    bench = TransferBench(cfg, train, test)
    assert bench.majority == {"human_vs_model": "response_b", "model_vs_model": "response_a"}
    majority = next(a for a in s.arms if a.name == "majority")
    for u in s.units:
        c = bench.by_id[u.key]
        assert measure(bench, majority, u, None)["preference"] == bench.majority[c.compare_type]
        # a model's arm is empty on the other type's comparisons (and never trains for them)
        arm = next(a for a in s.arms if a.params.get("test_type") not in (None, c.compare_type))
        assert measure(bench, arm, u, None) == {}


def _release(path) -> None:
    """A release file in English: the better answer restates the reference, the worse one does not;
    human_vs_model pairs put the better answer second, model_vs_model first (so always "a" is right
    on one type only)."""
    recs = []
    for i in range(24):
        ctype = ("human_vs_model", "model_vs_model")[i % 2]
        good = f"Item {i}: water boils at one hundred degrees at sea level, lower on mountains."
        bad = f"Item {i}: it depends on the colour of the pot and the day of the week."
        a, b, label = (bad, good, "response_b") if ctype == "human_vs_model" else (good, bad, "response_a")
        recs.append({"id": f"r{i}", "question": f"When does water boil ({i // 2})?", "reference": good,
                     "response_a": a, "response_b": b, "compare_type": ctype, "label": label})  # fmt: skip
    path.write_text(json.dumps(recs))


def test_a_transfer_run_on_a_release_file_resumes_from_its_cells(tmp_path):
    data = tmp_path / "unified_benchmark_en.json"
    _release(data)
    sets = {"data": str(data), "experiment": "transfer", "metrics": "trained_evaluator", "n_boot": "20"}
    record, run_dir = run_system(SYSTEM, "smoke", sets, out=tmp_path / "run")
    assert record.status == "complete"
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    by_id = {f"r{i}": ("human_vs_model", "model_vs_model")[i % 2] for i in range(24)}
    for c in cells:
        if ":" in c["arm"]:  # a model's arm has a cell only on its test type
            assert bool(c["metrics"]) == (c["arm"].endswith("->" + by_id[c["unit"]]))
    assert {c["unit"] for c in cells if c["arm"] == "always_a"} == {c["unit"] for c in cells}
    table = next(t for t in record.report.tables if t.title.startswith("Trained on one compare type"))
    assert [r[:2] for r in table.rows[:2]] == [["trained_evaluator", "human_vs_model"],
                                                ["trained_evaluator", "model_vs_model"]]  # fmt: skip
    assert table.rows[0][2].endswith("(in-type)") and table.rows[1][3].endswith("(in-type)")
    floors = {r[0]: r for r in table.rows[2:]}
    assert floors["always_a"][2].startswith("0.0") and floors["always_a"][3].startswith("100.0")
    assert floors["majority"][2].startswith("100.0")  # the majority of each type's training labels
    checks = next(t for t in record.report.tables if t.title.startswith("Claim checks")).rows
    assert len(checks) == 2 * (1 + 3 + 3)
    assert any("[UNK]" in n for n in record.report.notes)
    folders = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert folders == ["evaluator_human_vs_model", "evaluator_model_vs_model"]
    again, _ = run_system(SYSTEM, "smoke", sets, out=tmp_path / "run")  # every cell reused
    assert next(t for t in again.report.tables if t.title.startswith("Trained on one")).rows == table.rows
    assert len((run_dir / "cells.jsonl").read_text().splitlines()) == len(cells)
