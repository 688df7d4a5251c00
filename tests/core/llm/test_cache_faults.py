"""Issue 57 item 13: the response cache under faults, and one model per cache and run folder.

Another process holds the cache locked (sqlite3 `BEGIN EXCLUSIVE`); the cache sits on a read-only
mount; the file is not a database; the server behind the same URL starts serving another model.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from iclr26.core.errors import UserError
from iclr26.core.llm import CachedChatModel, Completion, OpenAIChatModel, ResponseCache
from iclr26.core.llm.cache import request_key
from iclr26.core.system import RunContext
from tests.core.llm.json_server import JSONHandler, serve

Q = [{"role": "user", "content": "Name a colour."}]
HIT = [Completion("blue", "stop")]

# Holds an exclusive lock on the database at argv[1] until a line arrives on stdin.
HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def rollback_journal_db(path: Path) -> None:
    """A cache file in SQLite's default (rollback) journal mode, as another tool leaves it: a lock
    on it blocks every other connection, readers included."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, value TEXT, created REAL)")
        db.execute("INSERT INTO responses VALUES ('k', 'm', ?, 0)", (json.dumps([{"text": "blue"}]),))
    db.close()


def hold_lock(path: Path) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "locked"
    return holder


def release(holder: subprocess.Popen) -> None:
    holder.communicate("go\n", timeout=30)
    assert holder.returncode == 0


def test_a_locked_cache_is_waited_for_and_never_moved_aside(tmp_path):
    path = tmp_path / "c.sqlite"
    rollback_journal_db(path)
    holder = hold_lock(path)
    try:
        with pytest.raises(UserError, match=r"c\.sqlite is locked by another process \(waited 0\.3 s\)"):
            ResponseCache(path, timeout=0.3)  # held past the wait: a clear error
        assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite"]  # nothing moved aside

        opened: list[ResponseCache] = []
        opener = threading.Thread(target=lambda: opened.append(ResponseCache(path)))
        opener.start()
        opener.join(timeout=0.5)
        assert opener.is_alive() and not opened  # waiting for the lock
    finally:
        release(holder)
    opener.join(timeout=30)
    [cache] = opened
    assert cache.get("k") == [Completion("blue")] and not cache.read_only  # the same file, its entry kept
    cache.put("k2", "m", HIT)
    assert len(cache) == 2
    assert not [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    cache.close()


def test_a_write_that_meets_a_lock_waits_then_lands(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, timeout=30)
    holder = hold_lock(path)
    try:
        writer = threading.Thread(target=cache.put, args=("k", "m", HIT))
        writer.start()
        writer.join(timeout=0.5)
        assert writer.is_alive()  # blocked by the other process, not failed
    finally:
        release(holder)
    writer.join(timeout=30)
    assert cache.get("k") == HIT
    cache.close()


@pytest.mark.debian("bubblewrap")
def test_a_read_only_cache_still_serves_its_hits(tmp_path):
    """The cache folder mounted read-only (even root cannot write it): opened `mode=ro`, hits
    served, misses not stored, nothing renamed."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "c.sqlite"
    cache = ResponseCache(path)
    key = request_key("http:m", Q, {"call": "chat"})
    cache.put(key, "http:m", HIT)
    cache.close()  # the last connection: the -wal and -shm files are gone
    path.chmod(0o444)
    folder.chmod(0o555)
    script = f"""
import json
from iclr26.core.llm import ResponseCache, Completion
cache = ResponseCache({str(path)!r})
hit = cache.get({key!r})
cache.put("other", "m", [Completion("red")])
print(json.dumps({{"read_only": cache.read_only, "hit": hit[0].text, "n": len(cache)}}))
"""
    got = subprocess.run(
        [
            "bwrap",
            "--dev-bind",
            "/",
            "/",
            "--ro-bind",
            str(folder),
            str(folder),
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == {"read_only": True, "hit": "blue", "n": 1}
    assert sorted(p.name for p in folder.iterdir()) == ["c.sqlite"]


def test_only_a_file_that_is_not_a_database_is_moved_aside(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"garbage " * 1000)
    cache = ResponseCache(path)
    assert len(cache) == 0 and [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    cache.close()


class Switchable(JSONHandler):
    """A local *test server* (not a model): answers with the name of the model it serves, which
    the test changes behind the same URL, as a restarted server with other weights would."""

    served: ClassVar[list[str]] = ["model-a"]

    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json({"object": "list", "data": [{"id": self.served[0], "object": "model"}]})
        else:
            self.send_json({"error": "not found"}, 404)

    def do_POST(self):
        self.read_json()
        text = f"answer from {self.served[0]}"
        self.send_json(
            {
                "model": self.served[0],
                "choices": [{"index": 0, "message": {"content": text}, "finish_reason": "stop"}],
            }
        )


def test_another_served_model_is_another_cache_key(tmp_path):
    Switchable.served[0] = "model-a"
    with serve(Switchable) as url:
        first = CachedChatModel(OpenAIChatModel(url), ResponseCache(tmp_path / "c.sqlite"))
        assert first.chat(Q)[0].text == "answer from model-a"
        first.close()
        Switchable.served[0] = "model-b"  # same URL, same (unset) ICLR26_LLM_MODEL, other weights
        again = CachedChatModel(OpenAIChatModel(url), ResponseCache(tmp_path / "c.sqlite"))
        assert again.chat(Q)[0].text == "answer from model-b"  # not model-a's cached answer
        assert len(again.cache) == 2 and again.identity() == "http:model-b"
        again.close()


def test_resuming_a_run_folder_with_another_model_is_refused(tmp_path, monkeypatch):
    from iclr26.core.llm.identity import RUN_MODELS_FILE

    Switchable.served[0] = "model-a"
    with serve(Switchable) as url:
        monkeypatch.setenv("ICLR26_LLM_BASE_URL", url)
        monkeypatch.delenv("ICLR26_LLM_MODEL", raising=False)
        ctx = RunContext(tmp_path)  # --llm auto: the server, as ICLR26_LLM_BASE_URL is set
        ctx.chat_model().chat(Q)
        ctx.close_models()
        assert json.loads((tmp_path / RUN_MODELS_FILE).read_text()) == {"run": "http:model-a"}
        resumed = RunContext(tmp_path)
        resumed.chat_model().close()  # the same model: resumes
        Switchable.served[0] = "model-b"
        with pytest.raises(
            UserError, match=r"made with the model 'http:model-a' \(run\).*'http:model-b'"
        ) as e:
            RunContext(tmp_path).chat_model()
        assert e.value.exit_code == 2 and "\n" not in str(e.value)


def test_a_fine_tuned_file_at_the_same_path_has_another_fingerprint(tmp_path):
    from iclr26.core.llm.identity import files_fingerprint

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0" * (3 << 20))
    before = files_fingerprint([weights])
    weights.write_bytes(b"\0" * ((3 << 20) - 1) + b"\1")  # same name and size, one weight changed
    assert files_fingerprint([weights]) != before


def test_two_checkpoints_saved_in_one_folder_are_two_models(tmp_path):
    """A local transformers model re-trained into the same folder is another identity."""
    from iclr26.core.llm.hf import TransformersChatModel
    from tests.tiny_hf import tiny_llama

    identities = []
    for seed in (0, 1):
        model, fast = tiny_llama(roles=True, seed=seed)
        model.save_pretrained(tmp_path / "ckpt")
        fast.save_pretrained(tmp_path / "ckpt")
        identities.append(TransformersChatModel(tmp_path / "ckpt").identity())
    assert identities[0] != identities[1] and all(i.startswith("transformers:ckpt:") for i in identities)
