"""Prompt builders (chat layout, styles, exceptions, a shuffle that really shuffles) and the two
scoring modes."""

import random

import pytest

from iclr26.core.config import ConfigError
from iclr26.icl_analysis.prompts import (
    STYLES,
    build_messages,
    exemplars,
    max_tokens,
    salad_of_thought,
    salad_words,
    shot_counts,
)
from iclr26.icl_analysis.scoring import parse_reply, score
from iclr26.icl_analysis.tasks import TASKS, make_splits
from iclr26.icl_analysis.traces import trace

PARITY = TASKS["parity"]
SPLITS = make_splits(PARITY, 0, n_train=120, n_test=20, n_ood=0, deltas=())


@pytest.mark.parametrize("style", [s for s in STYLES if s != "apo"])
def test_chat_layout_one_pair_per_exemplar(style):
    shots = exemplars(SPLITS.train, 5)
    msgs = build_messages(PARITY, style, shots, SPLITS.test[0], rng=random.Random(0))
    system = [m for m in msgs if m["role"] == "system"]
    assert len(system) == (0 if style == "modus_ponens" else 1)
    turns = [m for m in msgs if m["role"] != "system"]
    assert [m["role"] for m in turns] == ["user", "assistant"] * 5 + ["user"]
    assert [m["content"] for m in turns[0:10:2]] == [s.shown for s in shots]
    assert turns[-1]["content"] == SPLITS.test[0].shown
    answers = [m["content"] for m in turns[1:10:2]]
    if style in ("cot", "salad_of_thought"):
        assert all(a.endswith(f"So the answer is {s.label}") for a, s in zip(answers, shots, strict=True))
    else:
        assert answers == [str(s.label) for s in shots]


def test_styles_differ_in_what_they_say():
    q, shots = SPLITS.test[0], exemplars(SPLITS.train, 2)
    desc = build_messages(PARITY, "description", shots, q, rng=random.Random(0))[0]["content"]
    auto = build_messages(PARITY, "automaton", shots, q, rng=random.Random(0))[0]["content"]
    salad = build_messages(PARITY, "word_salad", shots, q, rng=random.Random(0))[0]["content"]
    assert (
        "even number of zeros" in desc and auto.startswith(desc.rsplit("\n", 2)[0]) and len(auto) > len(desc)
    )
    words = salad.split()
    assert 15 <= len(words) <= 40 and set(words) <= set(salad_words())
    other = build_messages(PARITY, "word_salad", shots, q, rng=random.Random(1))[0]["content"]
    assert other != salad  # a fresh salad per query
    apo = build_messages(PARITY, "apo", shots, q, rng=random.Random(0), system="Optimised instruction.")
    assert apo[0] == {"role": "system", "content": "Optimised instruction."}


def test_salad_of_thought_keeps_the_skeleton():
    ex = SPLITS.train[0]
    cot = trace(PARITY, ex)
    sot = salad_of_thought(cot, random.Random(0))
    assert sot != cot and sot.endswith(f"So the answer is {ex.label}")
    digits = [t for t in cot.split() if any(c.isdigit() for c in t)]
    assert digits == [t for t in sot.split() if any(c.isdigit() for c in t)]


def test_shuffle_really_reorders_the_first_k():
    plain = exemplars(SPLITS.train, 20)
    shuffled = exemplars(SPLITS.train, 20, shuffle=True, seed=3)
    assert plain == SPLITS.train[:20]
    assert shuffled != plain and sorted(shuffled, key=lambda i: i.index) == sorted(
        plain, key=lambda i: i.index
    )
    assert exemplars(SPLITS.train, 20, shuffle=True, seed=3) == shuffled  # seeded
    a = build_messages(PARITY, "modus_ponens", plain, SPLITS.test[0], rng=random.Random(0))
    b = build_messages(PARITY, "modus_ponens", shuffled, SPLITS.test[0], rng=random.Random(0))
    assert a != b and sorted(m["content"] for m in a) == sorted(m["content"] for m in b)


def test_shot_exceptions_and_budgets():
    assert shot_counts("modus_ponens") == [2, 5, 10, 20, 50, 100]
    assert shot_counts("cot") == [0, 5, 10, 20, 50, 100] == shot_counts("salad_of_thought")
    assert shot_counts("description") == [0, 2, 5, 10, 20, 50, 100]
    assert max_tokens("cot") == 1024 and max_tokens("description") == 3


def test_bad_prompt_input():
    with pytest.raises(ValueError, match="shots=200 is more than the 120 training items"):
        exemplars(SPLITS.train, 200)
    with pytest.raises(ConfigError, match="style must be one of"):
        build_messages(PARITY, "poetry", [], SPLITS.test[0], rng=random.Random(0))
    with pytest.raises(ValueError, match="modus_ponens needs at least one exemplar"):
        build_messages(PARITY, "modus_ponens", [], SPLITS.test[0], rng=random.Random(0))
    with pytest.raises(ValueError, match="needs the optimised prompt"):
        build_messages(PARITY, "apo", [], SPLITS.test[0], rng=random.Random(0))


def test_parse_reply_labels_and_reasoning():
    assert parse_reply("1", reasoning=False, binary=True) == 1
    assert parse_reply(" 0.\n", reasoning=False, binary=True) == 0
    assert parse_reply("The label is 1", reasoning=False, binary=True) is None  # first word only
    assert parse_reply("2", reasoning=False, binary=True) is None  # not a label
    assert parse_reply("15", reasoning=False, binary=False) == 15
    assert parse_reply("... So the answer is 1.", reasoning=True, binary=True) == 1
    assert parse_reply("balance 10, then -5... the answer is -15", reasoning=True, binary=False) == -15
    assert parse_reply("I am not sure", reasoning=True, binary=True) is None
    assert parse_reply("", reasoning=False, binary=True) is None


def test_punish_and_drop():
    s = score([1, None, 0, 1], [1, 0, 1, 1])
    assert (s.n, s.parsed, s.correct) == (4, 3, 2)
    assert s.punish == 50.0 and s.drop == pytest.approx(200 / 3) and s.failure_rate == 25.0
    assert s.accuracy("punish") == 50.0 and s.accuracy("drop") == s.drop
    assert score([None, None], [0, 1]).drop == 0.0  # nothing parsed: 0, as the paper
    with pytest.raises(ConfigError, match="mode must be one of 'punish', 'drop'"):
        s.accuracy("lenient")
    with pytest.raises(ValueError, match="2 predictions for 3 labels"):
        score([1, 0], [1, 0, 1])
