"""Scripted candidate pools (not a model) and the pools study against a stub OpenAI-compatible server
(a real HTTP server answering by a rule the test sets, not a language model): pools of known quality,
the pipeline's stages on a given pool, and verdicts that follow the answers."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from iclr26.core.errors import UserError
from iclr26.sci_refine import dataset
from iclr26.sci_refine.grading import grade
from iclr26.sci_refine.pools import perturbable, scripted_pool, wrong_answers
from iclr26.sci_refine.refine import RefineConfig, Refiner
from tests.core.llm.json_server import ChatStub
from tests.sci_refine.stub_run import cell_metrics, run_on_stub
from tests.sci_refine.test_refine import RecordingSolver, ScriptedJudge

QSET = dataset.build(12, 0, 5)
PERTURBABLE = [q for q in QSET.questions if perturbable(q)]


def test_pools_have_the_quality_p_sets() -> None:
    """p = 1: every candidate passes the grader; p = 0: none does; the pool repeats with its seed, and
    the wrong answers are written as the gold answers are."""
    assert len(PERTURBABLE) >= 4
    for q in PERTURBABLE:
        good = scripted_pool(q, 1.0, 4, seed=1)
        bad = scripted_pool(q, 0.0, 4, seed=1)
        assert good.n_good == 4 and all(grade(q, c, None).correct for c in good.candidates)
        assert bad.n_good == 0 and not any(grade(q, c, None).correct for c in bad.candidates)
        assert scripted_pool(q, 0.5, 4, seed=1) == scripted_pool(q, 0.5, 4, seed=1)
        if q.answer_type == "numeric":
            assert all(w == format(float(w), ".6g") for w in wrong_answers(q, 1))  # as gold is written
    shares = [scripted_pool(q, 0.5, 20, seed=s).n_good / 20 for q in PERTURBABLE for s in range(5)]
    assert 0.35 < sum(shares) / len(shares) < 0.65


def test_exact_answers_cannot_be_perturbed() -> None:
    exact = next(q for q in QSET.questions if q.answer_type == "exact")
    assert not perturbable(exact)
    with pytest.raises(UserError, match="cannot be perturbed"):
        wrong_answers(exact, 0)


def test_refine_runs_the_stages_after_the_proposers_on_a_given_pool() -> None:
    """No proposer call: each given candidate is HSR's anchor once, then the selector picks."""
    solver = RecordingSolver()
    pool = ["a\nAnswer: 1", "b\nAnswer: 2", "c\nAnswer: 3"]
    cfg = RefineConfig(proposers=3, corrector=False, hsr=True, qair=False)
    res = Refiner(ScriptedJudge([]), solver, cfg).refine("Q?", pool, seed=2)
    assert [s for s, _ in res.attempts] == ["hsr"] * 3 and res.stages["proposals"] == pool
    for i, text in enumerate(solver.prompts):
        assert f"(the anchor):\n{pool[i]}" in text
    alone = Refiner(
        ScriptedJudge([]), solver, RefineConfig(proposers=3, corrector=False, hsr=False, qair=False)
    )
    picked = alone.refine("Q?", pool, seed=2)
    assert picked.final == pool[1] and picked.attempts == []  # the scripted judge picks Response 2
    with pytest.raises(UserError, match="at least 2"):
        Refiner(ScriptedJudge([]), solver, cfg).refine("Q?", pool[:1])


def _gold_of(text: str) -> str | None:
    return next((q.gt for q in PERTURBABLE if q.query in text), None)


def _stub(hsr_right: bool) -> type[ChatStub]:
    """The selector picks the first response stating the gold answer (else Response 1); HSR writes the
    gold answer (hsr_right) or 'none'; the evaluator passes everything."""

    def reply(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        gold = _gold_of(text)
        if "Which response answers" in text:
            blocks = re.split(r"Response (\d+):\n", text)[1:]
            for n, block in zip(blocks[::2], blocks[1::2], strict=False):
                if gold and f"Answer: {gold}" in block:
                    return f"Choice: Response {n}"
            return "Choice: Response 1"
        if "Score the solution" in text:
            return json.dumps({"logic": 5, "answer": 5, "explanation": 5, "suggestion": "none"})
        return f"Answer: {gold}" if hsr_right and gold else "Answer: none"

    return ChatStub.new(reply)


def _run(handler, tmp_path, monkeypatch):
    settings = {"experiment": "pools", "n_questions": "12", "n_distractors": "5", "pools.n_questions": "3",
                "pools.p": "[0.34,0.67]"}  # fmt: skip
    record, run_dir = run_on_stub(handler, settings, tmp_path / "run", monkeypatch)
    return record, cell_metrics(run_dir)


@pytest.mark.parametrize("hsr_right", [True, False])
def test_the_pools_verdict_follows_the_answers(hsr_right, tmp_path, monkeypatch) -> None:
    record, cells = _run(_stub(hsr_right), tmp_path, monkeypatch)
    units = {u for _, u in cells}
    assert len(units) == 6
    for u in units:
        assert cells[("gold", u)]["correct"] == 1 and cells[("no_answer", u)]["correct"] == 0
        # the selector finds the gold candidate exactly when the pool holds one
        assert cells[("selector", u)]["correct"] == cells[("selector", u)]["pool_has_gold"]
        assert cells[("hsr", u)]["correct"] == int(hsr_right)
        assert cells[("hsr", u)]["final_good"] == (3 if hsr_right else 0)
    tables = {t.title: t for t in record.report.tables}
    assert "Where the pool holds one gold candidate" in tables
    claims = tables["Claim checks (paired over units)"].rows
    hsr_vs_majority = next(r for r in claims if r[1] == "hsr" and r[2] == "majority")
    assert record.report.claim_check.method == "hsr" and record.report.claim_check.baseline == "majority"
    majority = sum(cells[("majority", u)]["correct"] for u in units)
    if hsr_right:  # HSR right everywhere: it can only tie or beat the majority answer
        assert hsr_vs_majority[5] == ("held" if majority <= 3 else hsr_vs_majority[5])
        assert hsr_vs_majority[5] in ("held", "within noise")
    else:
        assert hsr_vs_majority[5] == ("uninformative" if majority == 0 else "did not hold")
