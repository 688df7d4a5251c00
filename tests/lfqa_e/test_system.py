"""The `lfqa_e` system as a study: the smoke preset on the built-here set (resumed from cells.jsonl),
the arms, floors and claims, the verdict against a stub judge server on 127.0.0.1 (a real HTTP server
that answers each judge prompt by a rule the test sets, not a language model), a release file by
path, and config errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.lfqa_e import SYSTEM, build_comparisons
from iclr26.lfqa_e.config import LFQAConfig
from iclr26.lfqa_e.data import Comparison
from iclr26.lfqa_e.judges import JudgeConfig, pair_prompt
from iclr26.lfqa_e.system import FLOORS, Bench, _claims, measure, split_by_question, study
from tests.core.llm.json_server import ChatStub, point_llm_at, serve


def _table(record, prefix):
    return next(t for t in record.report.tables if t.title.startswith(prefix))


def _cells(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / CELLS_FILE).read_text().splitlines()]


def test_smoke_runs_resumes_from_its_cells_and_writes_figures(tmp_path):
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    main = _table(record, "Agreement with the labels")
    metrics = [r[1] for r in main.rows]
    assert metrics == ["rouge1", "bleu", "judge_pairwise", "trained_evaluator", "always_a", "coin_flip",
                       "majority", "(the label itself)"]  # fmt: skip
    assert [r[0] for r in main.rows[4:7]] == ["floor"] * 3
    assert all(0 <= r[3] <= 100 and 0 <= r[5] <= 100 for r in main.rows)
    assert _table(record, "Judges: position bias").rows[0][0] == "judge_pairwise"
    for name in ("metrics_accuracy_f1.png", "best_judge_confusion.png", "metric_agreement.png"):
        assert (run_dir / name).stat().st_size > 5_000
    built = json.loads((run_dir / "built_comparisons.json").read_text())
    assert len(built) == 12 and {r["label"] for r in built} <= {"response_a", "response_b", "same"}
    assert not (run_dir / "checkpoints" / "metrics").exists()  # the one ledger is cells.jsonl
    cells = _cells(run_dir)
    assert len(cells) == 7 * 6  # 4 metrics and 3 floors on the 6 test comparisons
    judged = [c for c in cells if c["arm"] == "judge_pairwise" and c["metrics"]]
    assert len(judged) == 2 and all(c["tokens"]["calls"] == 2 for c in judged)  # both orders, per cell
    assert record.llm_usage["calls"] == 4
    standard = _table(record, "lfqa_e: every arm")
    assert {r[1] for r in standard.rows} >= {"method", "baseline", 'floor (always "a")', "floor (coin flip)",
                                             "floor (majority class)"}  # fmt: skip
    claim = record.report.claim_check
    assert (claim.method, claim.baseline, claim.verdict) == ("judge_pairwise", "rouge1", "not tested")
    again, _ = run_system(SYSTEM, "smoke", out=out)  # every cell is reused, no judge call made
    assert (again.llm_usage or {}).get("calls", 0) == 0
    assert _table(again, "Agreement with the labels").rows == main.rows
    assert len(_cells(run_dir)) == len(cells)


def _comparisons(n: int = 8) -> tuple[list[Comparison], list[Comparison]]:
    return split_by_question(build_comparisons(n, seed=0, model=None, pairs_per_question=2), 0.5, 0)


def test_the_study_declares_metrics_floors_and_claims():
    cfg = SYSTEM.config("smoke")
    train, test = _comparisons()
    s = study(cfg, train, test)
    roles = {a.name: a.role for a in s.arms}
    assert roles == {"rouge1": "baseline", "bleu": "baseline", "judge_pairwise": "method",
                     "trained_evaluator": "method", "always_a": "floor", "coin_flip": "floor",
                     "majority": "floor"}  # fmt: skip
    assert [u.key for u in s.units] == [c.id for c in test]
    first, second = s.claims
    assert (first.method, first.baselines, first.floor_arm) == ("judge_pairwise", ("rouge1",), "majority")
    assert second.baselines == ("always_a", "coin_flip", "majority") and first.interval == "bootstrap"
    assert {r.name for r in s.references} >= {"paper: human", "paper: ROUGE"}
    # no judge: the fine-tuned evaluator is the method; no judge and no trained model (the headline on
    # a whole release file): each static metric against the floors, ROUGE-1 first, as methods
    only = LFQAConfig(metrics=("rougeL", "trained_evaluator"))
    assert next((c.method, c.baselines) for c in _claims(only)) == ("trained_evaluator", ("rougeL",))
    static = LFQAConfig(metrics=("bleu", "rouge1", "length"), train_share=0.0)
    assert [(c.method, c.baselines) for c in _claims(static)] == [
        (m, ("always_a", "coin_flip", "majority")) for m in ("rouge1", "bleu", "length")
    ]
    assert {a.name: a.role for a in study(static, [], test).arms if a.role != "floor"} == {
        "bleu": "method", "rouge1": "method", "length": "method"
    }  # fmt: skip


def test_the_floors_read_nothing_of_the_responses():
    train, test = _comparisons(12)
    bench = Bench(LFQAConfig(), train, test)
    counts = {k: sum(c.label == k for c in train) for k in ("response_a", "response_b", "same")}
    assert bench.majority == max(counts, key=counts.get)
    got = {a.name: [measure(bench, a, s_unit, None) for s_unit in study(LFQAConfig(), train, test).units]
           for a in FLOORS}  # fmt: skip
    assert [g["preference"] for g in got["always_a"]] == ["response_a"] * len(test)
    assert [g["correct"] for g in got["always_a"]] == [int(c.label == "response_a") for c in test]
    assert {g["preference"] for g in got["majority"]} == {bench.majority}
    coin = [g["preference"] for g in got["coin_flip"]]
    assert set(coin) == {"response_a", "response_b"}  # a fair coin over 12+ items shows both sides
    again = [measure(bench, FLOORS[1], u, None)["preference"] for u in study(LFQAConfig(), train, test).units]
    assert again == coin  # seeded per comparison


def _judge_stub(right: bool) -> type[ChatStub]:
    """A judge that gives the label's verdict for every built-here comparison (`right`), or the
    wrong one (the other response; for a tie, response_a in both orders)."""
    _, test = _comparisons(16)
    answers = {}
    for c in test:
        for swapped in (False, True):
            prompt = pair_prompt(c, JudgeConfig(kind="pairwise"), swapped=swapped)
            first = "response_b" if swapped else "response_a"
            if c.label == "same":  # wrong: response_a in both orders
                right_line = "the two responses are equally good"
                wrong_line = f"Response {2 if swapped else 1} is better"
            else:
                one = c.label == first
                right_line = f"Response {1 if one else 2} is better"
                wrong_line = f"Response {2 if one else 1} is better"
            answers[prompt] = f"Verdict: {right_line if right else wrong_line}"

    def reply(body: dict) -> str:
        return answers.get(body["messages"][-1]["content"], "no idea")

    return ChatStub.new(reply)


@pytest.mark.parametrize(("right", "verdict"), [(True, "held"), (False, "did not hold")])
def test_the_judges_verdict_follows_its_answers(right, verdict, tmp_path, monkeypatch):
    """A judge right on every comparison beats the three floors (held); one wrong on every
    comparison falls below them (did not hold). Its requests reach the run's server (`--llm`)."""
    handler = _judge_stub(right)
    settings = {"n_questions": "16", "pairs_per_question": "2", "judge_items": "0",
                "metrics": "rouge1,judge_pairwise", "n_boot": "20"}  # fmt: skip
    with serve(handler) as url:
        point_llm_at(monkeypatch, url)
        record, run_dir = run_system(SYSTEM, "smoke", settings, out=tmp_path / "run")
    _, test = _comparisons(16)
    assert len(handler.requests) == 2 * len(test)
    floors = [c for c in record.report.tables[-1].rows if c[2] in ("always_a", "coin_flip", "majority")]
    assert len(floors) == 3 and {r[5] for r in floors} == {verdict}, floors
    rows = {r[1]: r for r in _table(record, "Agreement with the labels").rows}
    assert rows["judge_pairwise"][3] == (100.0 if right else 0.0)
    judged = [c for c in _cells(run_dir) if c["arm"] == "judge_pairwise"]
    assert all(c["models"] == ["http:stub-model"] and c["tokens"]["calls"] == 2 for c in judged)


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
    assert rows["always_a"][3] == 50.0  # half the labels are response_a
    by_type = _table(record, "Accuracy (%) by compare type")
    assert by_type.columns[1:] == ["human_vs_model (n=4)", "model_vs_model (n=4)"]
    claim = record.report.claim_check  # static metrics only: ROUGE-1 against the floors, the worst check
    assert claim.method == "rouge1" and claim.baseline in ("always_a", "coin_flip", "majority")
    assert claim.method_value == 1.0 and claim.verdict == "held"  # 8 of 8 against a floor right half the time
    checks = _table(record, "Claim checks").rows
    assert [r[1] for r in checks] == ["rouge1"] * 3 + ["length"] * 3 + ["chrf"] * 3


def test_the_paper_preset_scores_the_whole_release():
    cfg = SYSTEM.config("paper")
    assert cfg.train_share == 0.0 and cfg.experiment == "metrics"
    assert not set(cfg.metrics) & {"trained_evaluator", "reward_model"}  # nothing to train on
    assert {"rouge1", "bertscore_f1", "judge_pairwise", "judge_reasoning"} <= set(cfg.metrics)


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
    with pytest.raises(ConfigError, match="experiment must be one of"):
        SYSTEM.config("smoke", {"experiment": "ablation"})
    with pytest.raises(ConfigError, match="scores only the models trained here, not rouge1"):
        SYSTEM.config("smoke", {"experiment": "transfer", "metrics": "rouge1,trained_evaluator"})
    with pytest.raises(ConfigError, match="leave reward_model"):
        SYSTEM.config("smoke", {"experiment": "transfer", "metrics": "trained_evaluator,reward_model",
                                "reward_model": str(tmp_path)})  # fmt: skip
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


@pytest.mark.parametrize("script", ["headline.py", "transfer.py"])
def test_the_release_benchmarks_need_the_file_named(script):
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "lfqa_e" / script
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout.splitlines() == [done.stdout.strip()] and done.stdout.startswith("error: name the")
