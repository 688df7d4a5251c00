"""The `sci_refine` system end to end on the smoke preset with the embedded SmolLM2: every row answers
the same built-here questions, the build-up table and the figure are written, the grader's reference
rows are 100 / 0, the floors sit below the rows, and a re-run on the same folder resumes from
cells.jsonl without asking again."""

from __future__ import annotations

import json

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system
from iclr26.sci_refine import SYSTEM
from iclr26.sci_refine.config import SciRefineConfig
from iclr26.sci_refine.refine import RefineConfig


def test_smoke_runs_every_row_and_resumes(tmp_path) -> None:
    pytest.importorskip("xllamacpp")
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    cells = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    rows = {"baseline", "explicit_rag", "injector"}
    answers = [{"row": c["arm"], "id": c["unit"], **c["metrics"]} for c in cells if c["arm"] in rows]
    assert {c["arm"] for c in cells} == rows | {"gold", "no_answer", "constant_A", "copy_question"}
    assert len({a["id"] for a in answers}) == 2 and len(answers) == 6 and len(cells) == 14
    assert not (out / "answers.jsonl").exists()  # the study's ledger is the only one
    for a in answers:
        assert a["tokens"] > 0 and a["calls"] >= 1 and a["steps"] >= 1
        if a["row"] == "baseline":
            assert a["retrieval_calls"] == 0 and a["injections"] == 0
        # evidence is named only for questions that need retrieval; a row that never searched finds none
        assert (a["evidence_found"] is None) is (a["needs_retrieval"] is False)
        if a["retrieval_calls"] == 0 and a["needs_retrieval"]:
            assert a["evidence_found"] == 0
    buildup, grader = record.report.tables[:2]
    assert [r[0] for r in buildup.rows] == [
        "baseline",
        "explicit_rag",
        "injector",
        "constant_A",
        "copy_question",
    ]
    assert [r[1] for r in grader.rows] == [100.0, 0.0]
    assert record.report.figures == ["buildup.png"] and (run_dir / "buildup.png").stat().st_size > 0
    assert sorted(p.name for p in out.glob("llm-cache-*.sqlite")) == [
        "llm-cache-baseline.sqlite",
        "llm-cache-explicit_rag.sqlite",
        "llm-cache-injector.sqlite",
    ]  # one cache per row: a row's tokens never come from another row's answers
    # 2 questions: fewer pairs than the claim rule needs
    assert record.report.claim_check.verdict == "not tested"
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert len((out / "cells.jsonl").read_text().splitlines()) == 14  # nothing answered twice
    assert again.report.tables[0].rows == buildup.rows
    assert again.llm_usage is None or again.llm_usage["calls"] == 0


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="rows"):
        SciRefineConfig(rows=("everything",))
    with pytest.raises(ConfigError, match="data_format"):
        SciRefineConfig(data_format="csv")
    with pytest.raises(ConfigError, match="judge"):
        SciRefineConfig(judge="human")
    with pytest.raises(ConfigError, match="retrieval_fraction"):
        SciRefineConfig(retrieval_fraction=1.5)
    with pytest.raises(ConfigError, match=r"refine\.proposers"):
        SciRefineConfig(refine=RefineConfig(proposers=1, hsr=False))


def test_a_run_folder_built_for_another_question_set_is_refused(tmp_path) -> None:
    from iclr26.core.errors import UserError
    from iclr26.core.system import RunContext
    from iclr26.sci_refine import dataset
    from iclr26.sci_refine.system import QASET_FILE, _questions

    dataset.save(dataset.build(3, 1, 5), tmp_path / QASET_FILE)
    ctx = RunContext(out_dir=tmp_path)
    with pytest.raises(UserError, match="holds another question set"):
        _questions(SciRefineConfig(n_questions=2, seed=1, n_distractors=5), ctx)
    with pytest.raises(UserError, match="n_distractors=6"):
        _questions(SciRefineConfig(n_questions=3, seed=1, n_distractors=6), ctx)
    assert len(_questions(SciRefineConfig(n_questions=3, seed=1, n_distractors=5), ctx)[0]) == 3
