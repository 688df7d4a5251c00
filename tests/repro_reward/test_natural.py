"""RePro in the natural prompt style: overthinking read from prose, the separators preset, and
the config's task rules."""

import dataclasses

import pytest

from iclr26.core.config import ConfigError
from iclr26.repro_reward.config import ReProSystemConfig
from iclr26.repro_reward.process_reward import ReProConfig
from iclr26.repro_reward.segments import split_segments
from iclr26.repro_reward.testbed import overthinking_tokens
from iclr26.rlvr.tasks import make_problems


@pytest.fixture
def problem():
    p = make_problems("addition", 2, 1, seed=0, style="natural")[0]
    return dataclasses.replace(p, question="12+30", answer="42")


def test_prose_overthinking_is_the_text_after_the_answer_is_first_stated(problem):
    assert overthinking_tokens(problem, "12 + 30 = 42.\nAnswer: 42") == len(".\n")
    long = "12 + 30 = 42. Let me check: 30 + 12 is also 42. Yes.\nAnswer: 42"
    assert overthinking_tokens(problem, long) == len(". Let me check: 30 + 12 is also 42. Yes.\n")
    assert overthinking_tokens(problem, "Answer: 42") == 0  # stated once, in the answer line
    assert overthinking_tokens(problem, "I do not know.") == 0  # no final answer
    assert overthinking_tokens(problem, "It is 4,200 or so. Answer: 4,200") == len(" or so. ")
    words = overthinking_tokens(problem, long, count=lambda s: len(s.split()))
    assert words == 11  # ". Let me check: 30 + 12 is also 42. Yes." in words


def test_scratchpad_overthinking_is_unchanged():
    p = make_problems("addition", 2, 1, seed=0)[0]
    text = "".join(s + "\n" for s in p.steps) + "c:" + p.steps[0] + "\nA:" + p.answer
    assert overthinking_tokens(p, text) == len("c:" + p.steps[0]) + 1


def test_natural_separators_split_sentences():
    cfg = ReProConfig.natural()
    spans = split_segments("First add 12 and 30. That gives 42. Answer: 42", cfg.sep, cfg.stop)
    assert len(spans) == 2  # the reasoning stops at the answer marker
    assert cfg.answer_prefix.strip() == "Answer:"


def test_natural_style_takes_gsm_but_not_countdown():
    ReProSystemConfig(task="gsm", style="natural", train_levels=(1,), eval_levels=(1,))
    with pytest.raises(ConfigError, match="natural style"):
        ReProSystemConfig(task="countdown", style="natural", train_levels=(1,), eval_levels=(1,))
    with pytest.raises(ConfigError, match="column scratchpads"):
        ReProSystemConfig(task="gsm", train_levels=(1,), eval_levels=(1,))
