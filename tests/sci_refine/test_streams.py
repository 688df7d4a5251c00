"""Templated streams (built here, not by a model) and the streams study against a stub
OpenAI-compatible server (a real HTTP server answering by a rule the test sets, not a language model;
every call it answers costs 10 prompt + 5 completion tokens): where the need sits, what each arm counts."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from iclr26.sci_refine import dataset
from iclr26.sci_refine.stream_study import check_ends
from iclr26.sci_refine.streams import KINDS, build_stream
from tests.core.llm.json_server import ChatStub
from tests.sci_refine.stub_run import cell_metrics, run_on_stub

NEED = re.compile(r"need (the|its)")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("length", [1000, 8000])
def test_a_stream_names_its_need_at_the_known_offset(kind, length) -> None:
    s = build_stream(kind, length, seed=7)
    assert s == build_stream(kind, length, seed=7) and s.text != build_stream(kind, length, seed=8).text
    assert len(s.text) >= length and s.text[s.need_start : s.need_end] == s.need.sentence
    assert 0.3 * length - 5 <= s.need_end <= 0.9 * length + len(s.need.sentence) + 120
    assert len(NEED.findall(s.text)) == 1  # the need is named once; the filler names none
    ends = check_ends(len(s.text), 512, 128)
    assert ends[0] == 512 and all(b - a == 384 for a, b in itertools.pairwise(ends))
    assert any(s.holds_need(e, 512) for e in ends)  # some window shows the whole need sentence


def test_the_gold_value_is_in_the_gold_passage() -> None:
    passages = dataset.build(2, 0, 20).passages
    ids = dataset.canonical_ids(passages)
    by_id = {p.id: p.text for p in passages}
    for kind in KINDS:
        for seed in range(5):
            need = build_stream(kind, 1000, seed).need
            assert need.value in by_id[ids[need.key]], need


def _stub(monitor_says_yes: bool) -> type[ChatStub]:
    """Monitor: yes on a window naming the need (when asked to), else no; Querier: the need sentence;
    Injector: a sentence; explicit RAG: a query line; a re-read: one token."""

    def reply(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        if "Reply with one word: yes or no" in text:
            window = text.split('"""')[1]
            return " yes" if monitor_says_yes and NEED.search(window) else " no"
        if "Write one short search query" in text:
            window = text.split('"""')[1]
            return " " + next((x for x in re.split(r"(?<=\.) ", window) if NEED.search(x)), "nothing")
        if "Continue the reasoning below" in text:
            return " the notes give the value."
        if body.get("max_tokens") == 1:
            return "x"
        return "standard atomic weight\n"

    return ChatStub.new(reply)


def _run(handler, tmp_path, monkeypatch):
    settings = {"experiment": "streams", "n_distractors": "20", "streams.lengths": "[1000,2000]",
                "streams.per_length": "2", "monitor.yes_threshold": "0"}  # the written verdict  # fmt: skip
    record, run_dir = run_on_stub(handler, settings, tmp_path / "run", monkeypatch)
    return record, cell_metrics(run_dir)


def test_a_monitor_that_never_fires_costs_its_checks_only(tmp_path, monkeypatch) -> None:
    record, cells = _run(_stub(False), tmp_path, monkeypatch)
    units = {u for _, u in cells}
    assert len(units) == 4
    for u in units:
        m = cells[("implicit", u)]
        assert m["detected"] == 0 and m["hit_at_k"] == 0 and m["gold_value"] == 0
        assert m["monitor_calls"] == m["checks"] and m["overhead_tokens"] == 15 * m["checks"]
        e = cells[("explicit_rag", u)]
        # the query's 5 completion tokens; the re-read: the prefix as one piece (10) and the observation
        # message (10, less the 9 of a bare message)
        assert e["detected"] == 1 and e["overhead_tokens"] == 5 + 10 + 1
        assert cells[("no_retrieval", u)]["stream_tokens"] == 10
    assert record.report.claim_check.method == "implicit"
    assert record.report.claim_check.baseline == "explicit_rag"


def test_a_monitor_that_fires_at_the_need_injects_once(tmp_path, monkeypatch) -> None:
    _, cells = _run(_stub(True), tmp_path, monkeypatch)
    for (arm, _), m in cells.items():
        if arm != "implicit":
            continue
        assert m["detected"] == 1 and m["false_alarm_rate"] < 1
        # checks up to the first yes, the Querier and the Injector (15 tokens each), the re-read (10)
        assert m["overhead_tokens"] == 15 * (m["monitor_calls"] + 2) + 10
        assert m["monitor_calls"] <= m["checks"] and "injection" in m
        if m["fired_at_need"]:
            assert NEED.search(m["query"])
