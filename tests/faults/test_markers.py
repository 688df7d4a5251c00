"""A resume record cut off by a kill (issue 57, item 10): the record a resume trusts is appended
whole, and a torn last one counts as not done, so the resume redoes that work instead of failing on
it or reading half a result. The record is now a cell of the study's ledger (`cells.jsonl`, issue
59), which replaced laplacianformer's per-run done markers."""

from __future__ import annotations

import json

from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.laplacianformer import SYSTEM

SETTINGS = {"attentions": "softmax", "train.epochs": "1", "scaling_lengths": "64,128"}


def test_a_torn_ledger_record_is_redone(tmp_path) -> None:
    out = tmp_path / "run"
    first, _ = run_system(SYSTEM, "smoke", SETTINGS, out=out)
    assert first.status == "complete"
    ledger = out / CELLS_FILE
    whole = ledger.read_bytes()
    *done, last = whole.splitlines(keepends=True)  # the softmax cell, then the majority floor's
    assert json.loads(last)["arm"] == "majority"
    for torn in (b"", last[: len(last) // 2], last[:-1], b"\xe2\x82"):
        ledger.write_bytes(b"".join(done) + torn)  # as a kill while appending the last cell would leave it
        again, _ = run_system(SYSTEM, "smoke", SETTINGS, out=out)  # redoes that cell
        assert again.status == "complete"
        cells = [json.loads(line) for line in ledger.read_bytes().splitlines()]
        assert [c["arm"] for c in cells] == ["softmax", "majority"]  # whole again, one record each
        assert cells[-1]["metrics"] == json.loads(last)["metrics"]
