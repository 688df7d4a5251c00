"""A "done" marker cut off by a kill (issue 57, item 10): the marker a resume trusts is written
atomically, and a torn or empty one counts as not done, so the resume redoes that work instead of
failing on it or reading half a result."""

from __future__ import annotations

import json

from iclr26.core.runner import run_system
from iclr26.laplacianformer import SYSTEM

SETTINGS = {"attentions": "softmax", "train.epochs": "1", "scaling_lengths": "64,128"}


def test_a_torn_done_marker_is_redone(tmp_path) -> None:
    out = tmp_path / "run"
    first, _ = run_system(SYSTEM, "smoke", SETTINGS, out=out)
    assert first.status == "complete"
    (marker,) = (out / "train").glob("*.json")
    whole = marker.read_bytes()
    for torn in (b"", whole[: len(whole) // 2], whole[:-1], b"\xe2\x82", b"[1, 2]"):
        marker.write_bytes(torn)  # as a kill while writing it in place would leave it
        again, _ = run_system(SYSTEM, "smoke", SETTINGS, out=out)  # retrains that seed
        assert again.status == "complete"
        assert json.loads(marker.read_bytes()).keys() == json.loads(whole).keys()  # whole again
        assert [f.name for f in (out / "train").iterdir()] == [marker.name]  # no temporary left
