"""The optional language-model parts: paraphrased instructions through core.llm, and the LLM judge's
refusal of a model that takes no images."""

import pytest

from iclr26.core.errors import UserError
from iclr26.vincie.judge import LLMJudge
from iclr26.vincie.video import paraphrase


def test_paraphrase_keeps_the_objects_or_the_template(smollm2):
    text = "make the red circle bigger"
    out = paraphrase(text, smollm2)
    assert out == text or ("red" in out.split() and "circle" in out.split())
    assert len(out.split()) <= 24


def test_llm_judge_needs_a_vision_model(smollm2):
    with pytest.raises(UserError, match="needs a vision chat model"):
        LLMJudge(smollm2)
