from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest

from iclr26.core.llm import ChatModel, LLMError, smollm2_gguf_path

pytestmark = pytest.mark.llm
Q = [{"role": "user", "content": "Name three fruits."}]


def test_gguf_ships_in_the_wheel():
    path = smollm2_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_generates_text(smollm2):
    assert isinstance(smollm2, ChatModel)
    [c] = smollm2.chat(Q, max_tokens=24)
    assert len(c.text.split()) >= 2
    assert c.finish_reason in ("stop", "length")
    assert c.usage["completion_tokens"] <= 24


def test_n_samples_seeded(smollm2):
    a = smollm2.chat(Q, n=4, temperature=1.0, max_tokens=16, seed=3)
    b = smollm2.chat(Q, n=4, temperature=1.0, max_tokens=16, seed=3)
    assert len(a) == 4
    assert len({c.text for c in a}) >= 2  # real sampling, not one answer copied
    assert [c.text for c in a] == [c.text for c in b]


def test_greedy_logprobs_are_the_argmax(smollm2):
    [c] = smollm2.chat(Q, max_tokens=8, logprobs=True, top_logprobs=3)
    assert c.logprobs and len(c.logprobs) == c.usage["completion_tokens"]
    for t in c.logprobs:
        assert t.logprob <= 0
        assert len(t.top) == 3 and [v for _, v in t.top] == sorted((v for _, v in t.top), reverse=True)
        assert t.top[0][0] == t.token and t.top[0][1] == pytest.approx(t.logprob)
    assert "".join(t.token for t in c.logprobs) == c.text


def test_json_schema_output_parses(smollm2):
    schema = {
        "type": "object",
        "properties": {"fruit": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["fruit", "count"],
        "additionalProperties": False,
    }
    msgs = [{"role": "user", "content": "Give one fruit and how many you have, as JSON."}]
    # a bounded string: sampled at 0.8, an unbounded one can run past max_tokens (an emoji loop) and stop
    # unterminated, whatever the grammar; the grammar, not luck, must make every reply parse
    schema["properties"]["fruit"]["maxLength"] = 16
    for c in smollm2.chat(msgs, n=3, temperature=0.8, max_tokens=160, json_schema=schema, seed=0):
        jsonschema.validate(c.json(), schema)


def test_stop_sequence(smollm2):
    msgs = [{"role": "user", "content": "Count from 1 to 10 separated by commas."}]
    [full] = smollm2.chat(msgs, max_tokens=40)
    assert "5" in full.text
    [cut] = smollm2.chat(msgs, max_tokens=40, stop=["5"])
    assert cut.text == full.text[: full.text.index("5")] and cut.finish_reason == "stop"


def test_bad_requests_are_named(smollm2):
    with pytest.raises(ValueError, match="n must be a positive int"):
        smollm2.chat(Q, n=0)
    with pytest.raises(ValueError, match=r"messages\[0\]\['role'\]"):
        smollm2.chat([{"role": "robot", "content": "x"}])
    with pytest.raises(LLMError, match="unrecognized type"):
        smollm2.chat(Q, json_schema={"type": "bogus"})


def test_logprobs_without_alternatives(smollm2):
    [c] = smollm2.chat(Q, max_tokens=6, logprobs=True)
    assert c.logprobs and all(t.top == () for t in c.logprobs)


def test_thread_count_from_the_environment(monkeypatch):
    from iclr26.core.errors import UserError
    from iclr26.core.llm.embedded import embedded_threads

    monkeypatch.setenv("ICLR26_LLM_THREADS", "1")
    assert embedded_threads() == 1
    monkeypatch.delenv("ICLR26_LLM_THREADS")
    assert 1 <= embedded_threads() <= 4
    monkeypatch.setenv("ICLR26_LLM_THREADS", "two")
    with pytest.raises(UserError, match="ICLR26_LLM_THREADS must be a positive integer, got 'two'"):
        embedded_threads()


def test_a_reply_does_not_depend_on_the_request_before_it(smollm2):
    """At temperature 0 a request gets the same reply whatever the server answered before it: a
    resumed or `--jobs` run asks in another order. With llama.cpp's prompt-prefix reuse on, one of
    these twelve replies changed when asked again in reverse after four had been in flight at once."""
    system = "You are a careful scientist. Answer the question with a short reasoning and then 'Answer: X'."
    questions = [
        f"Question {i}: what is {i * 7 + 3} times {i + 2}, and which of A) {i} B) {i * 3} "
        f"C) {(i * 7 + 3) * (i + 2)} D) 0 is right?"
        for i in range(12)
    ]

    def ask(q: str) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": q}]
        return smollm2.chat(messages, max_tokens=48, temperature=0.0, seed=1)[0].text

    forward = [ask(q) for q in questions]
    with ThreadPoolExecutor(4) as pool:  # leaves a different prompt in each of the 4 slots
        list(pool.map(ask, questions))
    backward = [ask(q) for q in reversed(questions)][::-1]
    assert forward == backward
