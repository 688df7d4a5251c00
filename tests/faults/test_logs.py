"""Append-only JSON-lines logs after a kill mid-write (issue 57, item 9): whatever byte the kill
lands on, a cut UTF-8 character included, the next resume reads the log, redoes only the record that
was cut off, and leaves a log that every later resume reads too."""

from __future__ import annotations

import json

from iclr26.agents.episode import Episode, ModelCall, Step, read_episodes, write_episodes
from iclr26.core.jsonfile import read_log
from iclr26.core.runner import run_system
from iclr26.glow import SYSTEM as GLOW


def _episode(n: int) -> Episode:
    text = f"température {n} °C — 日本語 🙂"  # two-, three- and four-byte UTF-8 characters
    step = Step(0, text, f"echo {text}", {"kind": "bash", "content": text}, model_call=ModelCall(3, 4))
    return Episode(f"task-{n}", "llm", [step], "done", True, 1.0, answer=text)


def test_every_cut_of_the_last_record_resumes(tmp_path) -> None:
    path = tmp_path / "episodes.jsonl"
    write_episodes(path, [_episode(0), _episode(1)])
    kept = path.read_bytes()
    write_episodes(path, [_episode(2)])
    whole = path.read_bytes()
    assert any(b >= 0x80 for b in whole[len(kept) :])  # the last record has multi-byte characters
    want = [_episode(n).to_json() for n in range(4)]
    for cut in range(len(kept), len(whole)):  # the kill lands on every byte of the last record
        path.write_bytes(whole[:cut])
        assert [e.to_json() for e in read_episodes(path)] == want[:2], cut
        write_episodes(path, [_episode(2)])  # the resume redoes the cut-off episode
        write_episodes(path, [_episode(3)])  # and the next one is appended after it
        assert [e.to_json() for e in read_episodes(path)] == want, cut
        assert path.read_bytes().startswith(whole), cut


def test_a_run_killed_mid_record_resumes_and_keeps_resuming(tmp_path) -> None:
    out = tmp_path / "run"
    overrides = {"agents": "oracle,null,random"}
    record, _ = run_system(GLOW, "smoke", overrides, out=out)
    log = out / "cells.jsonl"  # the study's ledger (core.ledger)
    whole = log.read_bytes()
    last = whole.rstrip(b"\n").rfind(b"\n") + 1
    for cut in (last + 1, (last + len(whole)) // 2, len(whole) - 1):  # first byte, middle, all but \n
        log.write_bytes(whole[:cut])
        again, _ = run_system(GLOW, "smoke", overrides, out=out)  # redoes the run cut off
        third, _ = run_system(GLOW, "smoke", overrides, out=out)  # and the log it left reads back
        assert again.status == third.status == "complete", cut
        lines = log.read_bytes().split(b"\n")
        assert lines[-1] == b"" and [json.loads(x)["arm"] for x in lines[:-1]] == [
            "oracle",
            "null",
            "random",
        ]
        assert [r["arm"] for r in read_log(log)] == ["oracle", "null", "random"]
        assert third.report.tables[0].rows == record.report.tables[0].rows
