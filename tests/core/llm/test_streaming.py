"""Interruptible streaming against the real SmolLM2: in-process (llama.cpp callbacks) and over
HTTP (server-sent events from the same llama.cpp server on 127.0.0.1)."""

import time

import pytest

from iclr26.core.llm import OpenAIChatModel, TextStream

pytestmark = pytest.mark.llm
Q = [{"role": "user", "content": "Count from 1 to 60, one number per line."}]


@pytest.fixture(params=["in-process", "http"])
def model(request, smollm2):
    if request.param == "in-process":
        yield smollm2
    else:
        client = OpenAIChatModel(smollm2.base_url, timeout=60)
        yield client
        client.close()


def read_until(stream: TextStream, k: int) -> str:
    for _ in stream:
        if len(stream.text) >= k:
            break
    stream.close()
    return stream.text


def test_stream_matches_chat_and_reports_usage(model):
    before = model.usage.total
    s = model.stream(Q, max_tokens=40)
    deltas = list(s)
    assert len(deltas) > 5 and "".join(deltas) == s.text
    assert s.text == model.chat(Q, max_tokens=40)[0].text  # greedy: same text both ways
    assert s.finish_reason in ("stop", "length") and not s.stopped
    got = model.usage.total
    assert got.calls - before.calls == 2
    assert s.completion_tokens == 40 and s.prompt_tokens > 10  # the final usage chunk


def test_stop_after_k_characters_then_continue_from_the_prefix(model):
    full = model.stream(Q, max_tokens=60).read()
    before = model.usage.total
    s = model.stream(Q, max_tokens=60)
    start = time.perf_counter()
    seen = read_until(s, 12)
    assert s.stopped and s.finish_reason is None
    assert 12 <= len(seen) < len(full) and full.startswith(seen)
    assert time.perf_counter() - start < 5
    # the stopped stream counted what it received, far fewer than 60 tokens
    spent = model.usage.total.completion_tokens - before.completion_tokens
    assert spent == s.completion_tokens and len(seen) // 4 <= spent < 30
    assert list(s) == []  # nothing more arrives after close
    # Continue from the prefix cut before its last line break: greedy decoding resumes the text.
    prefix = seen[: seen.rstrip().rfind("\n")]
    rest = model.stream(Q, max_tokens=60, prefix=prefix).read()
    assert not rest.startswith(prefix)  # the continuation, not the prefix again
    assert (prefix + rest)[: len(full) - 8] == full[: len(full) - 8]


def test_continue_from_an_edited_prefix(model):
    edited = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
    rest = model.stream(Q, max_tokens=8, prefix=edited).read()
    assert rest.strip().startswith("21")  # it goes on from the edit, not from the start
    [chat] = model.chat(Q, max_tokens=8, prefix=edited)
    assert chat.text == rest  # chat() with a prefix returns the continuation only


def test_stream_context_manager_closes(smollm2):
    with smollm2.stream(Q, max_tokens=60) as s:
        next(iter(s))
    assert s.stopped
    s.close()  # twice is fine


def test_stream_validates_arguments(smollm2):
    with pytest.raises(ValueError, match="max_tokens"):
        smollm2.stream(Q, max_tokens=0)
