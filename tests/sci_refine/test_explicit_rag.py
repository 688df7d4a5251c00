"""The explicit-RAG baseline: the search-block parser (malformed blocks included) and the agent loop,
driven by a scripted model (labelled as such, not an LLM)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.sci_refine import prompts
from iclr26.sci_refine.explicit_rag import (
    SEARCH_LEAD,
    ExplicitRAG,
    ExplicitRAGConfig,
    find_search_call,
    search_call_end,
    unclosed_search_block,
)
from iclr26.sci_refine.monitor import ImplicitRAG
from tests.sci_refine.test_monitor import WORDS, Recorder, ScriptedModel, counts, helper

QUESTION = "What is the mass of an electron in kg?"


def turns(*texts: str):
    """Main text by turn: the k-th assistant turn streams texts[k] (the last one repeats)."""

    def main(messages: Sequence[Any], prefix: str | None) -> str:
        if prefix:
            return " and so on."
        k = sum(1 for m in messages if m["role"] == "assistant")
        return texts[min(k, len(texts) - 1)]

    return main


# ---- the parser -------------------------------------------------------------------------------------


def test_a_search_block_is_found_with_its_offsets():
    text = "I need a constant.\n```search\nmass of electron\n```\nthen more"
    call = find_search_call(text)
    assert call is not None and call.query == "mass of electron" and not call.error
    assert text[call.start : call.end] == "```search\nmass of electron\n```"
    assert search_call_end(text) == call.end == text.index("\nthen")


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("```search electron mass```", "electron mass"),  # all on one line
        ('```search\n"electron mass"\n```', "electron mass"),  # quoted
        ("```search\n  electron\n  mass  \n```", "electron mass"),  # lines joined
        ("```search\na\n```\n```search\nb\n```", "a"),  # the first block only
        ("```python\nx=1\n```\n```search\nb\n```", "b"),  # other fences are not calls
    ],
)
def test_search_block_forms(text, query):
    call = find_search_call(text)
    assert call is not None and call.query == query and not call.error


@pytest.mark.parametrize(
    "text",
    ["no block here", "```searching for it```", "```search-engine\nq\n```", "```python\nsearch('q')\n```"],
)
def test_not_search_blocks(text):
    assert find_search_call(text) is None and search_call_end(text) is None


def test_malformed_blocks():
    empty = find_search_call("```search\n\n```")
    assert empty is not None and empty.query == "" and empty.error == "the block holds no query"
    unclosed = "let me look\n```search\nelectron mass\n"
    assert find_search_call(unclosed) is None and unclosed_search_block(unclosed)
    assert not unclosed_search_block("```search\nq\n```")
    long = find_search_call("```search\n" + "x" * 500 + "\n```", max_chars=200)
    assert long is not None and len(long.query) == 200


# ---- the loop -------------------------------------------------------------------------------------------


def test_the_stream_stops_at_the_closing_fence_and_the_observation_comes_back():
    model = ScriptedModel(
        turns("Let me look.\n```search\nelectron mass\n```\nNEVER SEEN", "Answer: 9.109e-31 kg")
    )
    search = Recorder()
    got = ExplicitRAG(model, search).run(QUESTION)
    assert got.turns == ["Let me look.\n```search\nelectron mass\n```", "Answer: 9.109e-31 kg"]
    assert model.streams[0]["stream"].stopped  # cut at the fence, not streamed to the end
    assert search.queries == ["electron mass"] and got.searches == 1
    assert [m["role"] for m in got.messages] == ["system", "user", "assistant", "user", "assistant"]
    obs = got.messages[3]["content"]
    assert (
        obs.startswith('Search results for "electron mass":')
        and "[1] The electron mass is 9.1093837e-31" in obs
    )
    assert got.stopped_by == "answered" and got.steps == 2 and got.final_text == "Answer: 9.109e-31 kg"
    [call] = got.tool_calls
    assert (call.step, call.query, call.passage_ids, call.error) == (0, "electron mass", ("p1", "p2"), "")


def test_the_tool_call_cap_and_the_step_cap():
    model = ScriptedModel(turns("```search\nelectron mass\n```"))
    cfg = ExplicitRAGConfig(max_steps=4, max_tool_calls=2)
    got = ExplicitRAG(model, Recorder(), cfg).run(QUESTION)
    assert got.steps == 4 and got.stopped_by == "max_steps"
    assert [c.error for c in got.tool_calls] == ["", "", "tool-call budget spent", "step budget spent"]
    assert got.searches == 2 and got.messages[-1]["role"] == "assistant"
    # the last step was told to answer, folded into the previous user message (turns alternate)
    assert got.messages[-2]["content"] == prompts.TOOL_BUDGET_SPENT + "\n\n" + prompts.FINAL_NUDGE
    roles = [m["role"] for m in got.messages]
    assert all(a != b for a, b in itertools.pairwise(roles[1:]))


def test_a_malformed_block_is_answered_and_counted():
    model = ScriptedModel(turns("```search\n```", "Answer: 1"))
    got = ExplicitRAG(model, Recorder()).run(QUESTION)
    assert got.tool_calls[0].error == "the block holds no query" and got.searches == 0
    assert got.messages[3]["content"] == prompts.TOOL_ERROR.format(error="the block holds no query")
    assert got.stopped_by == "answered"


def test_an_unclosed_block_at_the_end_of_a_turn_is_recorded():
    model = ScriptedModel(turns("Let me search.\n```search\nelectron mass\n"))
    got = ExplicitRAG(model, Recorder()).run(QUESTION)
    assert got.steps == 1 and got.tool_calls[0].error == "the search block was never closed"
    assert got.searches == 0


def test_model_output_is_never_executed(tmp_path: Path):
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    model = ScriptedModel(turns(f"```search\n{payload}\n```", "Answer: 1"))
    search = Recorder()
    ExplicitRAG(model, search).run(QUESTION)
    assert search.queries == [payload] and not marker.exists()


def test_steps_calls_and_tokens_are_counted():
    model = ScriptedModel(turns("```search\nelectron mass\n```", "Answer: 9.1e-31"), chunk=3)
    got = ExplicitRAG(model, Recorder()).run(QUESTION)
    assert got.roles["main"].calls == 2 == got.steps
    assert counts(got.usage) == counts(model.usage.total)
    assert got.usage.completion_tokens == 9 + 5  # deltas of 3 characters: 27 and 15 characters
    assert got.roles["monitor"].calls == 0 and not got.monitored


def test_a_failing_stream_ends_the_episode_with_a_message():
    model = ScriptedModel(turns("partial"), ending="error")
    got = ExplicitRAG(model, Recorder()).run(QUESTION)
    assert got.stopped_by == "error" and "slot crashed" in got.error and got.turns == ["partial"]


def test_with_a_monitor_both_kinds_of_retrieval_run():
    first = WORDS[:600] + "```search\nproton mass\n```"
    model = ScriptedModel(turns(first, "Answer: 1"), helper())
    search = Recorder()

    def main(messages: Sequence[Any], prefix: str | None) -> str:
        return "\n```search\nproton mass\n```" if prefix else turns(first, "Answer: 1")(messages, prefix)

    model.main = main
    agent = ExplicitRAG(model, search, ExplicitRAGConfig(max_tokens=2000), monitor=ImplicitRAG(model, search))
    got = agent.run(QUESTION)
    assert search.queries == ["electron mass", "proton mass"] and got.searches == 2
    assert len(got.monitored) == 2 and len(got.monitored[0].injections) == 1
    assert got.turns[0].endswith("```search\nproton mass\n```") and got.stopped_by == "answered"
    assert got.roles["monitor"].calls == 1 + 0  # the second turn is too short to check
    assert counts(got.usage) == counts(model.usage.total)


def test_bad_input_is_named():
    model = ScriptedModel()
    with pytest.raises(ConfigError, match="max_tool_calls must be an int >= 0"):
        ExplicitRAGConfig(max_tool_calls=-1)
    with pytest.raises(ConfigError, match="max_steps must be a positive int"):
        ExplicitRAGConfig(max_steps=0)
    with pytest.raises(UserError, match="question must be a non-empty string"):
        ExplicitRAG(model, Recorder()).run("  ")
    with pytest.raises(UserError, match="search must be a callable"):
        ExplicitRAG(model, None)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="monitor= must wrap the same main model"):
        ExplicitRAG(model, Recorder(), monitor=ImplicitRAG(ScriptedModel(), Recorder()))


# ---- search_first: the authors' mandatory first search -----------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        "electron mass\nand then the model rambles on",
        "electron mass\n```\nmore",
        "electron mass```\n```python\nx = 1\n```",  # closed on the query line; a later block ignored
        "\n  \n```search\n electron mass \nmore",  # blank lines and a repeated opening fence skipped
        "electron mass",  # the stream ends (or runs out of tokens) with no newline
    ],
)
def test_search_first_opens_the_first_turn_and_the_query_line_is_the_search(written):
    def main(messages: Sequence[Any], prefix: str | None) -> str:
        return written if prefix == SEARCH_LEAD else "Answer: 9.109e-31 kg"

    model = ScriptedModel(main)
    search = Recorder()
    got = ExplicitRAG(model, search, ExplicitRAGConfig(search_first=True)).run(QUESTION)
    assert model.streams[0]["prefix"] == SEARCH_LEAD and model.streams[1]["prefix"] is None
    assert got.turns == ["```search\nelectron mass\n```", "Answer: 9.109e-31 kg"]
    assert search.queries == ["electron mass"] and got.stopped_by == "answered"


def test_search_first_cuts_the_stream_after_the_query_line():
    model = ScriptedModel(lambda m, p: "electron mass\nNEVER SEEN" if p else "Answer: 1")
    ExplicitRAG(model, Recorder(), ExplicitRAGConfig(search_first=True)).run(QUESTION)
    assert model.streams[0]["stream"].stopped


def test_search_first_with_an_empty_query_is_a_malformed_block_and_the_episode_goes_on():
    model = ScriptedModel(lambda m, p: "```" if p else "Answer: 1")
    got = ExplicitRAG(model, Recorder(), ExplicitRAGConfig(search_first=True)).run(QUESTION)
    assert got.turns == ["```search\n\n```", "Answer: 1"]
    assert [c.error for c in got.tool_calls] == ["the block holds no query"]


@pytest.mark.parametrize("kwargs", [{"max_steps": 1}, {"max_tool_calls": 0}])
def test_search_first_is_off_when_no_search_or_no_later_step_could_follow(kwargs):
    model = ScriptedModel(lambda m, p: "Answer: 1")
    got = ExplicitRAG(model, Recorder(), ExplicitRAGConfig(search_first=True, **kwargs)).run(QUESTION)
    assert model.streams[0]["prefix"] is None and got.turns[0] == "Answer: 1"
