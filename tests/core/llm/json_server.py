"""Local JSON *test servers* for the HTTP client tests: not language models. Each test subclasses
`JSONHandler` with the answers it needs; `serve` runs it on 127.0.0.1 for the test's duration."""

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class JSONHandler(BaseHTTPRequestHandler):
    """Reads a JSON request body and writes a JSON answer; logs nothing."""

    def read_json(self) -> dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def send_json(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def point_llm_at(monkeypatch: Any, url: str) -> None:
    """Make `--llm auto` resolve to the server at `url` (its `/v1`), with no model, key or
    concurrency left over from the caller's environment."""
    monkeypatch.setenv("ICLR26_LLM_BASE_URL", f"{url}/v1")
    for var in ("ICLR26_LLM_MODEL", "ICLR26_LLM_API_KEY", "ICLR26_LLM_MAX_CONCURRENCY"):
        monkeypatch.delenv(var, raising=False)


@contextmanager
def serve(handler: type[JSONHandler]) -> Iterator[str]:
    """Run `handler` on a free 127.0.0.1 port; yields the base URL (http://127.0.0.1:PORT)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class ChatStub(JSONHandler):
    """A stub OpenAI-compatible server (not a language model): `/v1/models` names one model, and
    every chat completion (plain, `n` > 1, with log-probs, or streamed) answers `reply(body)`. Each
    request's body is kept in `requests`, its headers in `seen_headers`. Make one per test with
    `ChatStub.new(reply)`."""

    requests: ClassVar[list[dict[str, Any]]] = []
    seen_headers: ClassVar[list[dict[str, str]]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()
    model_id = "stub-model"

    @staticmethod
    def reply(body: dict[str, Any]) -> str:
        return "ok"

    @classmethod
    def new(cls, reply: Callable[[dict[str, Any]], str] | None = None) -> type["ChatStub"]:
        """A subclass with its own request list (and `reply`, when given)."""
        attrs: dict[str, Any] = {"requests": [], "seen_headers": [], "lock": threading.Lock()}
        if reply is not None:
            attrs["reply"] = staticmethod(reply)
        return type("ChatStubRun", (cls,), attrs)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": self.model_id, "object": "model"}]})
        else:
            self.send_json({"error": {"message": f"no route {self.path}"}}, 404)

    def do_POST(self) -> None:
        body = self.read_json()
        with self.lock:
            self.requests.append(body)
            self.seen_headers.append(dict(self.headers))
        text = self.reply(body)
        if body.get("stream"):
            self._stream(text)
            return
        first = text[:1] or " "
        tokens = [{"token": first, "logprob": -0.1, "top_logprobs": [{"token": first, "logprob": -0.1}]}]
        choice = {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": tokens}
        n = int(body.get("n", 1))
        usage = {"prompt_tokens": 10, "completion_tokens": 5 * n, "total_tokens": 10 + 5 * n}
        self.send_json({"choices": [{"index": i, **choice} for i in range(n)], "usage": usage})

    def _stream(self, text: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": text}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
        ]  # fmt: skip
        for c in chunks:
            self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True
