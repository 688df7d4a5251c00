"""Spatial-DISE scoring: the letter parser on messy replies, Wilson CIs, evaluate, the VLM predictor."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from iclr26.core.llm import Completion, LLMUnsupported, UsageMeter
from iclr26.core.llm.base import refuse_images
from iclr26.core.llm.images import decode_data_url
from iclr26.spatial_dise.harness import (
    HUMAN,
    HUMAN_BY_QUADRANT,
    RANDOM,
    Accuracy,
    evaluate,
    parse_letter,
    prompt_text,
    vlm_predictor,
    wilson_interval,
)
from iclr26.spatial_dise.items import PROMPT_SUFFIX, QUADRANTS
from iclr26.spatial_dise.records import Record

REPLIES = [
    ("B", "B"),
    ("(C)", "C"),
    ("Answer: D.", "D"),
    ("**A**", "A"),
    ("The answer is B because the top block is missing in the others.", "B"),
    ("I think it's option c", "C"),
    ("<think>Maybe A... or B? Let me check A again.</think> C", "C"),
    ("<think>\nA looks right\n</think>\n\nThe answer is **D**.", "D"),
    ("A or B", None),
    ("", None),
    ("   \n", None),
    ("a", "A"),
    ("c.", "C"),
    ("A cube seen from the left matches option D.", "D"),
    ("The correct answer is (b).", "B"),
    ("Final answer: \\boxed{C}", "C"),
    ("I'd go with B.", "B"),
    ("B) the second view", "B"),
    ("Looking at a rotated copy of the shape, the answer is a", "A"),
    ("I cannot determine the answer from the image.", None),
    ("Answer: A or C", None),
    ("ANSWER: b", "B"),
    ("Option A is wrong. Answer: C", "C"),
    ("The answer is a cube.", None),
    ("<think>unfinished reasoning about A", None),
    ("Between A and D, I pick D.", "D"),
    ("3D rotation of the net: answer C", "C"),
    ("A and B both look plausible", None),
    ("Option (d)", "D"),
    ("The 2D net folds into C", "C"),
    ("**Answer:** `B`", "B"),
    ("a shape like this is a classic trick", None),
]


@pytest.mark.parametrize("reply, letter", REPLIES)
def test_parse_letter_messy_replies(reply: str, letter: str | None) -> None:
    assert parse_letter(reply) == letter


def test_parse_letter_covers_enough_cases() -> None:
    assert len(REPLIES) >= 15
    assert parse_letter(None) is None  # type: ignore[arg-type]


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    with pytest.raises(ValueError):
        wilson_interval(5, 3)
    assert math.isnan(Accuracy(0, 0).value)
    assert "50.0%" in str(Accuracy(1, 2))


def test_anchors() -> None:
    assert RANDOM == 0.248 and HUMAN == 0.768
    assert set(HUMAN_BY_QUADRANT) <= set(QUADRANTS)
    assert HUMAN_BY_QUADRANT["Intrinsic-Dynamic"] == 0.802


def rec(
    i: int, answer: str, task: str, quadrant: str, difficulty: str = "easy", image: str = "a.png"
) -> Record:
    return Record(f"r{i}", f"Question {i}?", answer, image, task, difficulty, quadrant, 1)


RECORDS = [
    rec(0, "A", "3d_rotation", "Intrinsic-Dynamic"),
    rec(1, "B", "3d_rotation", "Intrinsic-Dynamic", "hard"),
    rec(2, "C", "3d_projection", "Extrinsic-Static"),
    rec(3, "D", "3d_projection", "Extrinsic-Static", "hard"),
]


def test_evaluate_groups_and_logs_unparsed(caplog: pytest.LogCaptureFixture) -> None:
    replies = {"r0": "A", "r1": "The answer is B.", "r2": "I really cannot tell " + "x" * 200, "r3": "A"}
    with caplog.at_level(logging.WARNING, logger="iclr26.spatial_dise.harness"):
        ev = evaluate(RECORDS, lambda r: replies[r.id])
    assert (ev.overall.correct, ev.overall.total, ev.overall.unparsed) == (2, 4, 1)
    assert ev.by_task["3d_rotation"].correct == 2 and ev.by_task["3d_projection"].correct == 0
    assert ev.by_quadrant["Extrinsic-Static"].unparsed == 1
    assert ev.by_difficulty["hard"].correct == 1
    assert [p.letter for p in ev.predictions] == ["A", "B", None, "A"]
    (msg,) = [m for m in caplog.messages if "r2" in m]
    assert "I really cannot tell" in msg and "x" * 100 not in msg  # first 80 chars only
    rows = ev.rows()
    assert rows[0][:3] == ("overall", "all", 0.5) and len(rows) == 1 + 2 + 2 + 2


def test_evaluate_takes_a_list_of_letters() -> None:
    ev = evaluate(RECORDS, ["A", "B", "C", None])
    assert ev.overall.correct == 3 and ev.overall.unparsed == 1
    with pytest.raises(ValueError, match="one per record"):
        evaluate(RECORDS, ["A"])


class FakeChatModel:
    """A test double of `ChatModel`: replies from a script, records what it was sent."""

    name = "fake-vlm"
    supports_json_schema = False
    supports_logprobs = False

    def __init__(self, replies: Sequence[str], *, images: bool = True) -> None:
        self.replies = list(replies)
        self.supports_images = images
        self.usage = UsageMeter()
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages: Sequence[Any], **kwargs: Any) -> list[Completion]:
        if not self.supports_images:
            refuse_images(self.name, messages)
        self.calls.append({"messages": list(messages), **kwargs})
        return [Completion(self.replies[len(self.calls) - 1])]

    def stream(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        raise NotImplementedError


def test_vlm_predictor_sends_question_then_images(tmp_path: Path) -> None:
    Image.new("RGB", (16, 12), "white").save(tmp_path / "a.png")
    Image.new("RGB", (16, 12), "black").save(tmp_path / "b.png")
    records = [*RECORDS[:3], rec(9, "B", "fold_punch", "Intrinsic-Dynamic", image="a.png;b.png")]
    model = FakeChatModel(["A", "**B**", "Sure! It is option D, clearly.", "I'm not sure"])
    ev = evaluate(records, vlm_predictor(model, image_root=tmp_path))
    assert ev.overall.correct == 2 and ev.overall.unparsed == 1
    first = model.calls[0]
    assert first["temperature"] == 0.0 and first["max_tokens"] <= 32
    (message,) = first["messages"]
    text, image = message["content"]
    assert message["role"] == "user" and text["text"] == f"Question 0? {PROMPT_SUFFIX}"
    assert decode_data_url(image["image_url"]["url"])[0] == "image/png"
    assert len(model.calls[3]["messages"][0]["content"]) == 3  # text + two images


def test_prompt_suffix_is_not_doubled() -> None:
    r = Record("x", f"Which? {PROMPT_SUFFIX}", "A", "a.png", "t", "easy", "Intrinsic-Static")
    assert prompt_text(r).count(PROMPT_SUFFIX) == 1


def test_text_only_backend_refusal_propagates(tmp_path: Path) -> None:
    Image.new("RGB", (8, 8), "white").save(tmp_path / "a.png")
    model = FakeChatModel(["A"], images=False)
    with pytest.raises(LLMUnsupported, match="cannot see images"):
        evaluate(RECORDS[:1], vlm_predictor(model, image_root=tmp_path))
