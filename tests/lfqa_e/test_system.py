"""The `lfqa_e` system end to end: the smoke preset on the built-here set (resumed), a release
file by path, and config errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.runner import run_system
from iclr26.lfqa_e import SYSTEM
from iclr26.lfqa_e.data import Comparison
from iclr26.lfqa_e.system import split_by_question


def _table(record, prefix):
    return next(t for t in record.report.tables if t.title.startswith(prefix))


def test_smoke_runs_resumes_and_writes_figures(tmp_path):
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    main = _table(record, "Agreement with the labels")
    metrics = [r[1] for r in main.rows]
    assert metrics == ["rouge1", "bleu", "judge_pairwise", "trained_evaluator", "(the label itself)"]
    assert all(0 <= r[3] <= 100 and 0 <= r[5] <= 100 for r in main.rows)
    assert _table(record, "Judges: position bias").rows[0][0] == "judge_pairwise"
    for name in ("metrics_accuracy_f1.png", "best_judge_confusion.png", "metric_agreement.png"):
        assert (run_dir / name).stat().st_size > 5_000
    built = json.loads((run_dir / "built_comparisons.json").read_text())
    assert len(built) == 12 and {r["label"] for r in built} <= {"response_a", "response_b", "same"}
    assert sorted(p.name for p in (run_dir / "checkpoints" / "metrics").glob("*.json")) == sorted(
        f"{m}.json" for m in metrics[:-1]
    )
    assert (record.llm_usage or {}).get("calls", 0) > 0
    again, _ = run_system(SYSTEM, "smoke", out=out)  # every metric is reused, no judge call made
    assert (again.llm_usage or {}).get("calls", 0) == 0
    assert _table(again, "Agreement with the labels").rows == main.rows


def test_a_release_file_by_path(tmp_path):
    recs = []
    for i in range(8):
        good = f"Topic {i}: water boils at one hundred degrees at sea level, and lower on mountains."
        bad = f"Topic {i}: it depends on the colour of the pot."
        label = ("response_a", "response_b")[i % 2]
        a, b = (good, bad) if label == "response_a" else (bad, good)
        ctype = "human_vs_model" if i < 4 else "model_vs_model"
        recs.append({"id": f"r{i}", "question": f"When does water boil ({i})?", "context": "",
                     "reference": good, "response_a": a, "response_b": b, "compare_type": ctype,
                     "label": label})  # fmt: skip
    path = tmp_path / "unified_benchmark_en.json"
    path.write_text(json.dumps(recs))
    overrides = {"data": str(path), "metrics": "length,rouge1,chrf", "train_share": "0", "n_boot": "20"}
    record, _ = run_system(SYSTEM, "smoke", overrides, out=tmp_path / "run")
    data = _table(record, "Data").rows[0]
    assert data[0] == str(path) and data[1] == 8 and data[3] == "0 / 8"
    rows = {r[1]: r for r in _table(record, "Agreement with the labels").rows}
    assert rows["rouge1"][3] == 100.0 and rows["chrf"][3] == 100.0  # the reference is the good side
    by_type = _table(record, "Accuracy (%) by compare type")
    assert by_type.columns[1:] == ["human_vs_model (n=4)", "model_vs_model (n=4)"]


def test_split_keeps_questions_apart():
    comps = [
        Comparison(f"{q}-{k}", f"question {q}", "r", "a", "b", "same") for q in range(10) for k in range(3)
    ]
    train, test = split_by_question(comps, 0.5, seed=1)
    assert len(train) == len(test) == 15
    assert not {c.question for c in train} & {c.question for c in test}
    assert split_by_question(comps, 0.5, seed=1) == (train, test)


def test_config_errors_name_fields(tmp_path):
    with pytest.raises(ConfigError, match="metrics must be one of"):
        SYSTEM.config("smoke", {"metrics": "rouge1,meteor"})
    with pytest.raises(ConfigError, match=r"no field 'model' any more: choose the run's model with --llm"):
        SYSTEM.config("smoke", {"model": "gpt-5"})
    with pytest.raises(ConfigError, match="trained here and need train_share > 0"):
        SYSTEM.config("smoke", {"train_share": "0"})
    with pytest.raises(ConfigError, match=r"evaluator\.|steps must be an int"):
        SYSTEM.config("smoke", {"evaluator.steps": "0"})
    bad = tmp_path / "bad.json"
    rec = {"id": "x1", "question": "q", "reference": "r", "response_a": "a", "response_b": "",
           "compare_type": "model_vs_model", "label": "same"}  # fmt: skip
    bad.write_text(json.dumps([rec]))
    from iclr26.lfqa_e.data import DataError

    with pytest.raises(DataError, match=r"record 'x1': field 'response_b' is empty"):
        run_system(SYSTEM, "smoke", {"data": str(bad), "metrics": "rouge1", "train_share": "0"},
                   out=tmp_path / "run")  # fmt: skip
