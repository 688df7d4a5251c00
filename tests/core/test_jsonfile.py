"""core.jsonfile: user JSON / JSON-lines files read with one-line errors naming the file and line."""

from __future__ import annotations

import pytest

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json, read_jsonl


class MyError(UserError):
    pass


def test_reads_and_names_each_problem(tmp_path) -> None:
    good = tmp_path / "a.json"
    good.write_text('{"x": [1, 2]}')
    assert read_json(good) == {"x": [1, 2]}
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"a": 1}\n\n[2]\n')
    assert read_jsonl(lines) == [(1, {"a": 1}), (3, [2])]
    with pytest.raises(MyError, match=r"missing\.json: no such file"):
        read_json(tmp_path / "missing.json", MyError)
    with pytest.raises(UserError, match="is a folder"):
        read_json(tmp_path)
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(MyError, match=r"bad\.json: not JSON \(.* at line 1\)"):
        read_json(tmp_path / "bad.json", MyError)
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(UserError, match=r"bad\.jsonl: line 2 is not JSON"):
        read_jsonl(tmp_path / "bad.jsonl")
    (tmp_path / "latin.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(UserError, match="not UTF-8"):
        read_json(tmp_path / "latin.json")


def test_a_run_log_drops_only_a_torn_last_line(tmp_path) -> None:
    from iclr26.core.jsonfile import read_log

    log = tmp_path / "runs.jsonl"
    assert read_log(log) == []
    log.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b"')  # interrupted while writing the third
    assert read_log(log) == [{"a": 1}, {"a": 2}]
    log.write_text('{"a": 1}\n{broken\n{"a": 3}\n')
    with pytest.raises(UserError, match=r"runs\.jsonl: line 2 is not JSON"):
        read_log(log)
