"""Usage accounting (real SmolLM2), the SQLite response cache, and the bounded request pool."""

import sqlite3
import threading
import time
from typing import ClassVar

import pytest

from iclr26.core.errors import UserError
from iclr26.core.llm import CachedChatModel, OpenAIChatModel, ResponseCache, Usage, chat_many
from iclr26.core.llm.usage import UsageMeter
from tests.core.llm.json_server import JSONHandler, serve

Q = [{"role": "user", "content": "Name a colour."}]


class Counting:
    """Wraps a real model and counts the requests that reach it."""

    def __init__(self, model):
        self.model, self.calls = model, 0
        self.name, self.usage = model.name, model.usage
        self.supports_images = model.supports_images
        self.supports_json_schema = model.supports_json_schema
        self.supports_logprobs = model.supports_logprobs

    def chat(self, messages, **kw):
        self.calls += 1
        return self.model.chat(messages, **kw)

    def stream(self, messages, **kw):
        self.calls += 1
        return self.model.stream(messages, **kw)


def test_usage_meter_sums_and_is_thread_safe():
    meter = UsageMeter()
    threads = [
        threading.Thread(target=lambda: [meter.record(2, 3, 0.01) for _ in range(500)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = meter.total
    assert total.calls == 2000 and total.prompt_tokens == 4000 and total.completion_tokens == 6000
    assert total.as_dict()["total_tokens"] == 10000 and (Usage(1, 1, 1) + Usage(1, 2, 3)).total_tokens == 7


@pytest.mark.llm
def test_every_call_records_tokens_and_time(smollm2):
    smollm2.usage.reset()
    [c] = smollm2.chat(Q, max_tokens=10)
    one = smollm2.usage.total
    assert one.calls == 1 and one.prompt_tokens == c.usage["prompt_tokens"] > 5
    assert one.completion_tokens == c.usage["completion_tokens"] and one.wall_s > 0
    # n = 4 samples: four requests, every sample's tokens counted (llama.cpp's n > 1 usage is one choice's)
    many = smollm2.chat(Q, n=4, temperature=1.0, max_tokens=10, seed=1)
    after = smollm2.usage.total
    assert after.calls == 5
    assert after.completion_tokens - one.completion_tokens == sum(m.usage["completion_tokens"] for m in many)


@pytest.mark.llm
def test_cache_hits_cost_nothing_and_match(smollm2, tmp_path):
    counted = Counting(smollm2)
    model = CachedChatModel(counted, ResponseCache(tmp_path / "c.sqlite"))
    smollm2.usage.reset()
    a = model.chat(Q, max_tokens=12, seed=1)
    b = model.chat(Q, max_tokens=12, seed=1)
    assert a == b and counted.calls == 1
    u = smollm2.usage.total
    assert u.calls == 2 and u.cached_calls == 1 and u.completion_tokens == a[0].usage["completion_tokens"]
    model.chat(Q, max_tokens=12, seed=2)  # another seed is another request
    model.chat(Q, max_tokens=13, seed=1)  # so is another parameter
    assert counted.calls == 3


@pytest.mark.llm
def test_interrupted_evaluation_resumes_without_asking_again(smollm2, tmp_path):
    prompts = [[{"role": "user", "content": f"What is {i} plus {i}?"}] for i in range(5)]
    path = tmp_path / "eval.sqlite"
    first = CachedChatModel(Counting(smollm2), ResponseCache(path))
    done = [first.chat(p, max_tokens=8)[0].text for p in prompts[:3]]  # ... then the run dies
    first.cache.close()
    counted = Counting(smollm2)
    again = CachedChatModel(counted, ResponseCache(path))
    texts = [again.chat(p, max_tokens=8)[0].text for p in prompts]
    assert counted.calls == 2 and texts[:3] == done and len(again.cache) == 5


@pytest.mark.llm
def test_corrupt_entry_is_dropped_and_recomputed(smollm2, tmp_path):
    path = tmp_path / "c.sqlite"
    counted = Counting(smollm2)
    model = CachedChatModel(counted, ResponseCache(path))
    good = model.chat(Q, max_tokens=8)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE responses SET value = 'not json'")
    assert model.chat(Q, max_tokens=8) == good and counted.calls == 2
    assert model.chat(Q, max_tokens=8) == good and counted.calls == 2  # stored again


def test_a_file_that_is_not_a_database_is_moved_aside(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"garbage " * 1000)
    cache = ResponseCache(path)
    assert len(cache) == 0
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]


@pytest.mark.llm
def test_streams_are_cached_only_when_complete(smollm2, tmp_path):
    counted = Counting(smollm2)
    model = CachedChatModel(counted, ResponseCache(tmp_path / "s.sqlite"))
    s = model.stream(Q, max_tokens=30)
    next(s)
    s.close()
    assert len(model.cache) == 0  # a stopped stream is not a full answer
    full = model.stream(Q, max_tokens=30).read()
    replay = model.stream(Q, max_tokens=30)
    assert replay.read() == full and counted.calls == 2 and len(model.cache) == 1


class _Slow(JSONHandler):
    """A local *test server* (not a model): sleeps, echoes the prompt, tracks requests in flight."""

    lock = threading.Lock()
    live = 0
    peak: ClassVar[list[int]] = [0]

    def do_POST(self):
        body = self.read_json()
        cls = type(self)
        with cls.lock:
            cls.live += 1
            cls.peak[0] = max(cls.peak[0], cls.live)
        time.sleep(0.15)
        with cls.lock:
            cls.live -= 1
        self.send_json({"choices": [{"index": 0, "message": {"content": body["messages"][0]["content"]}}]})


@pytest.fixture
def slow_server():
    _Slow.peak[0] = 0
    with serve(_Slow) as url:
        yield f"{url}/v1"


def test_pool_bounds_requests_in_flight_and_keeps_order(slow_server):
    client = OpenAIChatModel(slow_server)
    reqs = [{"messages": [{"role": "user", "content": f"q{i}"}], "max_tokens": 4} for i in range(9)]
    start = time.perf_counter()
    out = chat_many(client, reqs, max_concurrency=3)
    assert [o[0].text for o in out] == [f"q{i}" for i in range(9)]
    assert _Slow.peak[0] == 3 and time.perf_counter() - start < 9 * 0.15  # parallel, but never above 3


def test_model_bound_holds_under_a_wider_pool(slow_server):
    client = OpenAIChatModel(slow_server, max_concurrency=2)
    reqs = [{"messages": [{"role": "user", "content": "q"}]} for _ in range(6)]
    chat_many(client, reqs, max_concurrency=6)
    assert _Slow.peak[0] == 2


def test_pool_errors_name_the_problem():
    with pytest.raises(UserError, match="max_concurrency"):
        chat_many(None, [], max_concurrency=0)
    with pytest.raises(UserError, match=r"requests\[1\]"):
        chat_many(None, [{"messages": Q}, {"prompt": "x"}])
    with pytest.raises(UserError, match="max_concurrency"):
        OpenAIChatModel("http://127.0.0.1:9/v1", max_concurrency=0)
