import socket
import time
from typing import ClassVar

import pytest

from iclr26.core.llm import LLMConnectionError, LLMError, OpenAIChatModel
from tests.core.llm.json_server import JSONHandler, serve

Q = [{"role": "user", "content": "Say hello."}]


@pytest.mark.llm
def test_against_smollm2_server(smollm2):
    client = OpenAIChatModel(smollm2.base_url, timeout=60)
    [c] = client.chat(Q, max_tokens=12)
    assert c.text.strip() and c.usage["completion_tokens"] <= 12
    many = client.chat(Q, n=3, temperature=1.0, max_tokens=12, seed=5)
    assert len(many) == 3 and len({m.text for m in many}) >= 2
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    [j] = client.chat(Q, json_schema=schema, max_tokens=20)
    assert isinstance(j.json()["ok"], bool)
    # HTTP and in-process answers agree for greedy decoding: same server, same model.
    assert client.chat(Q, max_tokens=12)[0].text == smollm2.chat(Q, max_tokens=12)[0].text
    client.close()


def test_refused_port_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    client = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", max_retries=3, backoff=0.5)
    t = time.perf_counter()
    with pytest.raises(LLMConnectionError, match=f"cannot connect.*127.0.0.1:{port}"):
        client.chat(Q)
    assert time.perf_counter() - t < 1.0  # refused: no retries


def _ok(n):
    return {
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": f"hi {i}"},
                "finish_reason": "stop",
            }
            for i in range(n)
        ],
        "usage": {"completion_tokens": 2},
    }


class _Scripted(JSONHandler):
    """A small test server (not an LLM): answers from a script of status codes."""

    script: ClassVar[list[int]] = []
    bodies: ClassVar[list[dict]] = []
    one_choice = False

    def do_POST(self):
        body = self.read_json()
        type(self).bodies.append(body)
        status = type(self).script.pop(0) if type(self).script else 200
        if status == 0:  # drop the connection without an answer
            self.close_connection = True
            return
        if status == -1:  # a 200 whose body is cut off mid-JSON
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b'{"choices')
            return
        payload = (
            _ok(1 if type(self).one_choice else body.get("n", 1))
            if status == 200
            else {"error": {"message": f"status {status}"}}
        )
        self.send_json(payload, status, {"Retry-After": "0"} if status == 503 else None)


@pytest.fixture
def scripted():
    _Scripted.bodies = []
    _Scripted.one_choice = False
    with serve(_Scripted) as url:
        yield None, url


def test_retries_on_503_then_succeeds(scripted):
    _, url = scripted
    _Scripted.script = [503, 503]
    out = OpenAIChatModel(url, backoff=0.01).chat(Q)
    assert out[0].text == "hi 0" and len(_Scripted.bodies) == 3


def test_gives_up_after_max_retries(scripted):
    _, url = scripted
    _Scripted.script = [503] * 5
    with pytest.raises(LLMError, match="HTTP 503 after 3 tries"):
        OpenAIChatModel(url, max_retries=2, backoff=0.01).chat(Q)


def test_a_dropped_connection_is_retried_and_then_an_llm_error(scripted):
    """Issue 57, item 14: a server that hangs up, or answers a cut-off body, ends in an LLMError (the
    episode's stop reason), never a raw httpx exception that ends the whole suite."""
    _, url = scripted
    _Scripted.script = [0, 0]
    assert OpenAIChatModel(url, backoff=0.01).chat(Q)[0].text == "hi 0" and len(_Scripted.bodies) == 3
    _Scripted.script = [0] * 5
    with pytest.raises(LLMError, match=r"connection failed \(RemoteProtocolError.*after 3 tries"):
        OpenAIChatModel(url, max_retries=2, backoff=0.01).chat(Q)
    _Scripted.script = [-1]
    with pytest.raises(LLMError, match="not JSON"):
        OpenAIChatModel(url, backoff=0.01).chat(Q)


def test_client_error_is_not_retried(scripted):
    _, url = scripted
    _Scripted.script = [400]
    with pytest.raises(LLMError, match="HTTP 400 after 1 tries"):
        OpenAIChatModel(url, backoff=0.01).chat(Q)
    assert len(_Scripted.bodies) == 1


def test_tops_up_servers_that_ignore_n(scripted):
    _, url = scripted
    _Scripted.script = []
    _Scripted.one_choice = True
    out = OpenAIChatModel(url).chat(Q, n=3, temperature=1.0, seed=10)
    assert len(out) == 3 and [b["n"] for b in _Scripted.bodies] == [3, 2, 1]
    assert [b["seed"] for b in _Scripted.bodies] == [10, 11, 12]


def test_request_shape(scripted):
    _, url = scripted
    _Scripted.script = []
    OpenAIChatModel(url, model="m", api_key="k").chat(
        Q, stop=["\n"], json_schema={"type": "object"}, logprobs=True, top_logprobs=2
    )
    b = _Scripted.bodies[-1]
    assert b["model"] == "m" and b["stop"] == ["\n"] and b["top_logprobs"] == 2
    assert b["response_format"]["json_schema"]["schema"] == {"type": "object"}


def test_bad_base_url():
    with pytest.raises(ValueError, match="base_url must start with http"):
        OpenAIChatModel("localhost:8000")
