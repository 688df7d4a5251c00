"""The built-here comparison set: labels follow from the edits, the texts carry out the edits, ties
and a/b order are balanced, and bad arguments fail at the boundary."""

from __future__ import annotations

import difflib
import random
from collections import Counter

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.llm import Completion
from iclr26.lfqa_e._text import blocks, clean, split_sentences
from iclr26.lfqa_e.build import (
    MAX_FACTS,
    MIN_FACTS,
    apply_edits,
    build_comparisons,
    contradict,
    paraphrase,
    python_topics,
    quality,
)
from iclr26.lfqa_e.data import COMPARE_TYPES, LABELS, label_counts, parse_records


@pytest.fixture(scope="module")
def comparisons():
    return build_comparisons(40, seed=0)


def _label(qa: float, qb: float) -> str:
    return "same" if qa == qb else ("response_a" if qa > qb else "response_b")


def _by_source():
    return {t.name: t for t in python_topics()}


def _quality_from_text(text: str, facts: tuple[str, ...], context: str) -> float:
    """Read the quality off a response's sentences: an exact (or paraphrased) key fact counts 1, a
    sentence close to a fact but different counts −1 (contradiction), anything else −0.5 and must
    be absent from the context (unsupported)."""
    forms = {f: f for f in facts} | {paraphrase(f): f for f in facts}
    kept, contradictions, unsupported = set(), 0, 0
    for s in split_sentences(text):
        if s in forms:
            assert forms[s] not in kept, f"fact repeated: {s!r}"
            kept.add(forms[s])
            continue
        best = max(difflib.SequenceMatcher(None, s, f).ratio() for f in forms)
        if best >= 0.8:
            contradictions += 1
        else:
            assert s not in context, f"an 'unsupported' sentence is in the context: {s!r}"
            unsupported += 1
    return len(kept) - 1.0 * contradictions - 0.5 * unsupported


# -- the topics -------------------------------------------------------------------------------------


def test_topics_have_clean_key_facts_found_in_their_context():
    topics = python_topics()
    assert len(topics) >= 40
    assert len({t.name for t in topics}) == len(topics)
    for t in topics:
        assert MIN_FACTS <= len(t.facts) <= MAX_FACTS, t.name
        assert t.question.endswith("?") and t.context.startswith(t.title)
        cleaned = [clean(b) for b in blocks(t.context)]
        for f in t.facts:
            assert any(f in b for b in cleaned), (t.name, f)
            assert "::=" not in f and ">>>" not in f and "\n" not in f and "**" not in f
            assert f.endswith(".") and f.count('"') % 2 == 0
        assert split_sentences(t.reference) == list(t.facts), t.name


# -- the edit primitives ----------------------------------------------------------------------------


def test_quality_rule():
    assert quality([], 6) == 6
    assert quality(["paraphrase", "reorder"], 6) == 6
    assert quality(["drop:1", "drop:4"], 6) == 4
    assert quality(["contradict:0"], 6) == 4  # the fact is lost and a contradiction added
    assert quality(["unsupported:template", "reorder"], 6) == 5.5
    assert quality(["truncate:3", "paraphrase"], 6) == 3
    assert quality(["contradict:2", "unsupported:lists"], 6) == 3.5
    with pytest.raises(ValueError, match="truncate must be the first edit"):
        quality(["drop:0", "truncate:3"], 6)
    with pytest.raises(ValueError, match="no quality rule"):
        quality(["shout"], 6)


def test_contradict_flips_one_claim_and_leaves_quoted_code_alone():
    s = 'The variable "__debug__" is "True" normally and "False" under "-O".'
    assert contradict(s) == 'The variable "__debug__" is "False" normally and "True" under "-O".'
    assert contradict("Items are evaluated from left to right.") == "Items are evaluated from right to left."
    assert contradict("A name may have at most 255 characters.") == "A name may have at most 256 characters."
    assert contradict("The loop does not run the else clause.") == "The loop does run the else clause."
    assert contradict("It is evaluated once.") == "It is not evaluated once."
    assert contradict('The "is" operator tests identity.') is None  # the only "is" is code
    assert contradict("Nothing here might change.") is None


def test_paraphrase_rewords_prose_but_not_code():
    assert paraphrase("It is used, for example, in loops.") == "It's used, for instance, in loops."
    assert paraphrase('It is "it is" because e.g. x.') == 'It\'s "it is" since for example x.'
    assert paraphrase("Nothing to change here.") == "Nothing to change here."
    for t in python_topics():
        for f in t.facts:
            p = paraphrase(f)
            assert len(split_sentences(p)) == 1 and p.endswith(".")
            assert contradict(f) != f


def test_apply_edits_does_what_each_edit_says():
    t = next(t for t in python_topics() if len(t.facts) >= 6)
    rng = random.Random(1)
    text, _ = apply_edits(t, ["drop:1", "drop:3"], rng)
    assert split_sentences(text) == [f for i, f in enumerate(t.facts) if i not in (1, 3)]
    text, _ = apply_edits(t, ["truncate:3"], rng)
    assert split_sentences(text) == list(t.facts[:3])
    i = next(i for i, f in enumerate(t.facts) if contradict(f))
    text, _ = apply_edits(t, [f"contradict:{i}"], rng)
    got = split_sentences(text)
    assert got[i] == contradict(t.facts[i]) != t.facts[i] and got[:i] + got[i + 1 :] == [
        f for j, f in enumerate(t.facts) if j != i
    ]
    text, names = apply_edits(t, ["unsupported:template"], rng)
    extra = [s for s in split_sentences(text) if s not in t.facts]
    assert names == ["unsupported:template"] and len(extra) == 1 and extra[0] not in t.context
    text, _ = apply_edits(t, ["reorder"], rng)
    got = split_sentences(text)
    assert sorted(got) == sorted(t.facts) and got != list(t.facts)
    with pytest.raises(ValueError, match=r"unknown edit|no quality rule"):
        apply_edits(t, ["shout"], rng)


# -- the comparison set -----------------------------------------------------------------------------


def test_records_are_well_formed(comparisons):
    assert len(comparisons) == 40 * 4
    assert len({c.id for c in comparisons}) == len(comparisons)
    topics = _by_source()
    for c in comparisons:
        t = topics[c.meta["source"]]
        assert c.id.startswith(f"py-{t.name}-") and c.label in LABELS and c.compare_type in COMPARE_TYPES
        assert c.language == "en" and c.topic == t.group and c.question == t.question
        assert c.reference == t.reference and c.context == t.context
        assert c.response_a != c.response_b and c.response_a.strip() and c.response_b.strip()
        assert c.compare_type == "human_vs_human" and c.meta["assumed"] is False
    # they survive the release schema's reader
    rows = [
        {"id": c.id, "question": c.question, "context": c.context, "reference": c.reference,
         "response_a": c.response_a, "response_b": c.response_b, "compare_type": c.compare_type,
         "label": c.label}
        for c in comparisons
    ]  # fmt: skip
    assert [(c.id, c.label) for c in parse_records(rows)] == [(c.id, c.label) for c in comparisons]


def test_labels_follow_from_the_edits(comparisons):
    for c in comparisons:
        n = c.meta["n_facts"]
        qa, qb = quality(c.meta["edits_a"], n), quality(c.meta["edits_b"], n)
        assert (qa, qb) == (c.meta["quality_a"], c.meta["quality_b"]), c.id
        assert c.label == _label(qa, qb), c.id


def test_texts_carry_out_the_edits(comparisons):
    """The quality read off each response's sentences is the quality its edits claim."""
    topics = _by_source()
    for c in comparisons:
        t = topics[c.meta["source"]]
        for text, edits, q in (
            (c.response_a, c.meta["edits_a"], c.meta["quality_a"]),
            (c.response_b, c.meta["edits_b"], c.meta["quality_b"]),
        ):
            assert _quality_from_text(text, t.facts, t.context) == q, (c.id, edits)
            sentences = split_sentences(text)
            names = [e.split(":")[0] for e in edits]
            for e in edits:
                if e.startswith("drop:"):
                    dropped = t.facts[int(e.split(":")[1])]
                    assert dropped not in sentences and paraphrase(dropped) not in sentences
            if "reorder" not in names and "paraphrase" not in names:
                kept = [s for s in sentences if s in t.facts]
                assert kept == sorted(kept, key=t.facts.index)  # facts stay in reference order
            if names == ["reorder"]:
                assert sorted(sentences) == sorted(t.facts) and sentences != list(t.facts)
            if names == ["paraphrase"]:
                assert text != t.reference and sentences == [paraphrase(f) for f in t.facts]


def test_ties_are_a_sane_share_and_of_several_kinds(comparisons):
    counts = label_counts(comparisons)
    assert 0.10 <= counts["same"] / len(comparisons) <= 0.20
    ties = [c for c in comparisons if c.label == "same"]
    kinds = Counter(
        frozenset(e.split(":")[0] for e in c.meta["edits_a"] + c.meta["edits_b"]) - {"reorder", "paraphrase"}
        for c in ties
    )
    assert len(kinds) >= 3  # not only neutral-vs-neutral
    assert all(c.meta["quality_a"] == c.meta["quality_b"] for c in ties)
    assert all(c.meta["quality_a"] != c.meta["quality_b"] for c in comparisons if c.label != "same")


def test_a_and_b_wins_are_balanced(comparisons):
    counts = label_counts(comparisons)
    assert abs(counts["response_a"] - counts["response_b"]) <= 1
    # and not by putting one kind of response first: the unedited reference sits on both sides
    sides = Counter(
        "a" if c.meta["edits_a"] == [] else "b"
        for c in comparisons
        if [] in (c.meta["edits_a"], c.meta["edits_b"])
    )
    assert sides["a"] > 0 and sides["b"] > 0


def test_deterministic_under_a_seed():
    one, two = build_comparisons(8, seed=3), build_comparisons(8, seed=3)
    assert one == two and [c.meta for c in one] == [c.meta for c in two]
    other = build_comparisons(8, seed=4)
    assert [(c.id, c.response_a) for c in other] != [(c.id, c.response_a) for c in one]


def test_swapped_keeps_label_and_edits_consistent(comparisons):
    for c in comparisons:
        s = c.swapped()
        n = s.meta["n_facts"]
        assert s.response_a == c.response_b and s.meta["edits_a"] == c.meta["edits_b"]
        assert s.label == _label(quality(s.meta["edits_a"], n), quality(s.meta["edits_b"], n))
        assert s.swapped() == c and s.swapped().meta["edits_a"] == c.meta["edits_a"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"n_questions": 0}, "n_questions"),
        ({"n_questions": 10_000}, "n_questions"),
        ({"n_questions": 2.5}, "n_questions"),
        ({"pairs_per_question": 0}, "pairs_per_question"),
        ({"tie_share": 1.5}, "tie_share"),
        ({"seed": "zero"}, "seed"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"model": object()}, "model"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=rf"^{field} must be") as e:
        build_comparisons(**kwargs)
    assert "\n" not in str(e.value)


def test_too_many_questions_says_how_many_topics_there_are():
    with pytest.raises(ConfigError, match=rf"\[1, {len(python_topics())}\]"):
        build_comparisons(len(python_topics()) + 1)


# -- human vs model ---------------------------------------------------------------------------------


class ScriptedModel:
    """A scripted stand-in for a chat model (not an LLM): a fixed reply, empty for one question."""

    name = "scripted"
    supports_images = supports_json_schema = supports_logprobs = False

    def __init__(self, silent_on: str) -> None:
        self.silent_on, self.asked = silent_on, []

    def chat(self, messages, **kw):
        question = messages[-1]["content"]
        self.asked.append((messages, kw))
        return [Completion("" if question == self.silent_on else "Python does it somehow.")]


def test_model_pairs_are_assumed_full_reference_wins_and_never_ties():
    plain = build_comparisons(5, seed=2)
    model = ScriptedModel(silent_on=plain[0].question)
    built = build_comparisons(5, seed=2, model=model)
    assert [c for c in built if c.compare_type == "human_vs_human"] == plain
    pairs = [c for c in built if c.compare_type == "human_vs_model"]
    assert len(pairs) == 4  # one per question, none for the empty reply
    assert len(model.asked) == 5 and all(kw["temperature"] == 0.0 for _, kw in model.asked)
    assert all(m[-1]["content"] != plain[0].context for m, _ in model.asked)  # closed-book
    for c in pairs:
        assert c.meta["assumed"] is True and c.label != "same"
        human, edits, q = (
            (c.response_a, c.meta["edits_a"], c.meta["quality_a"])
            if c.label == "response_a"
            else (c.response_b, c.meta["edits_b"], c.meta["quality_b"])
        )
        other = c.meta["edits_b"] if c.label == "response_a" else c.meta["edits_a"]
        assert edits in ([], ["paraphrase"]) and q == c.meta["n_facts"] and other == ["model:scripted"]
        facts = split_sentences(c.reference)
        assert split_sentences(human) == (facts if edits == [] else [paraphrase(f) for f in facts])
    assert {c.label for c in pairs} == {"response_a", "response_b"} or len(pairs) < 2


def test_embedded_smollm2_answers_two_questions(smollm2):
    built = build_comparisons(2, seed=0, pairs_per_question=1, model=smollm2, model_max_tokens=32)
    pairs = [c for c in built if c.compare_type == "human_vs_model"]
    assert len(pairs) == 2
    for c in pairs:
        answer = c.response_b if c.meta["edits_b"] == [f"model:{smollm2.name}"] else c.response_a
        assert answer.strip() and answer not in c.reference
        assert len(answer.split()) <= 32  # the token budget held: each word is at least one token
