"""sci_refine as a study, against a stub OpenAI-compatible server on 127.0.0.1 (a real HTTP server
that answers each question by a rule the test sets, not a language model): the claim's verdict follows
the answers (held, did not hold, uninformative), the floors and the oracle / null arms are in the
tables, and `--parallel threads --jobs 3` answers several questions at once with each cell's tokens
its own (the same cells as one at a time)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from iclr26.core.ledger import CELLS_FILE
from iclr26.sci_refine import dataset
from tests.core.llm.json_server import ChatStub
from tests.sci_refine.stub_run import run_on_stub

N = 4
SETTINGS = {"rows": "explicit_rag,injector", "n_questions": str(N), "n_distractors": "5"}
GOLD = {q.query: q.gt for q in dataset.build(N, 0, 5).questions}


def _text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


def _explicit(body: dict[str, Any]) -> bool:
    return "search block" in _text(body)  # the explicit-RAG row's system prompt


def _stub(right: str, pause: float = 0.0) -> type[ChatStub]:
    """A stub whose `right` row ("explicit", "monitor", "none") answers each question with its gold
    answer, the other "Answer: none"; it counts the requests in flight at once."""
    flight = {"now": 0, "max": 0}
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        with lock:
            flight["now"] += 1
            flight["max"] = max(flight["max"], flight["now"])
        try:
            time.sleep(pause)
            gold = next((gt for query, gt in GOLD.items() if query in _text(body)), None)
            wanted = right == ("explicit" if _explicit(body) else "monitor")
            return f"Answer: {gold}" if wanted and gold is not None else "Answer: none"
        finally:
            with lock:
                flight["now"] -= 1

    handler = ChatStub.new(reply)
    handler.flight = flight  # type: ignore[attr-defined]
    return handler


def _run(handler: type[ChatStub], tmp_path, monkeypatch, name: str, **kw: Any):
    return run_on_stub(handler, SETTINGS, tmp_path / name, monkeypatch, **kw)


def _cells(run_dir) -> dict[tuple[str, str], dict]:
    lines = (run_dir / CELLS_FILE).read_text().splitlines()
    return {(c["arm"], c["unit"]): c for c in map(json.loads, lines)}


@pytest.mark.parametrize(
    ("right", "verdict"),
    [("monitor", "held"), ("explicit", "did not hold"), ("none", "uninformative")],
)
def test_the_verdict_follows_the_answers(right, verdict, tmp_path, monkeypatch) -> None:
    """The Monitor row right on every question and explicit RAG wrong: held; the reverse: did not
    hold; both wrong everywhere (0 vs 0): uninformative, not 'within noise'."""
    record, run_dir = _run(_stub(right), tmp_path, monkeypatch, right)
    claim = record.report.claim_check
    assert claim.method == "injector" and claim.baseline == "explicit_rag" and claim.n == N
    assert claim.verdict == verdict, claim
    cells = _cells(run_dir)
    assert len(cells) == N * 6  # 2 rows, the oracle, the null and 2 floors, per question
    gold = [c["metrics"]["correct"] for (arm, _), c in cells.items() if arm == "gold"]
    assert gold == [1] * N  # the oracle passes every question, the null none: the suite is valid
    assert [c["metrics"]["correct"] for (arm, _), c in cells.items() if arm == "no_answer"] == [0] * N
    buildup = record.report.tables[0]
    assert [r[0] for r in buildup.rows] == ["explicit_rag", "injector", "constant_A", "copy_question"]
    standard = next(t for t in record.report.tables if t.title.startswith("sci_refine: every arm"))
    assert {r[1] for r in standard.rows} >= {"method", "baseline", "floor (constant)", "oracle", "null"}


def test_threads_answer_questions_at_once_with_each_cells_own_tokens(tmp_path, monkeypatch) -> None:
    """Three cells in flight against one server: the requests overlap, and every cell's tokens and
    calls are what it spent alone (a cell that read the shared model's meter would count the calls
    of the cells beside it)."""
    alone = _stub("monitor", pause=0.05)
    _, one_dir = _run(alone, tmp_path, monkeypatch, "one")
    assert alone.flight["max"] == 1
    together = _stub("monitor", pause=0.05)
    record, three_dir = _run(together, tmp_path, monkeypatch, "three", jobs=3, parallel="threads")
    assert together.flight["max"] >= 2, "no two requests were in flight at once"
    one, three = _cells(one_dir), _cells(three_dir)
    assert one.keys() == three.keys()
    for key, cell in one.items():
        for m in ("correct", "tokens", "calls", "steps", "retrieval_calls"):
            assert three[key]["metrics"][m] == cell["metrics"][m], (key, m)
    assert record.llm_usage["calls"] == len(together.requests)
