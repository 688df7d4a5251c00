"""sci_refine.grading: the rule graders per answer type, final-answer extraction and the LLM judge's
schema check, retry and "ungraded" outcome (with a scripted model, labelled as such)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from iclr26.core.errors import UserError
from iclr26.core.llm.base import Completion, LLMConnectionError, LLMError
from iclr26.core.llm.usage import UsageMeter
from iclr26.sci_refine.grading import (
    JUDGE_PROMPT,
    JUDGE_SCHEMA,
    extract_choice,
    extract_final_answer,
    grade,
    normalize_text,
    numbers_match,
    option_letters,
    parse_judge_reply,
    parse_number,
    summarize,
)
from iclr26.sci_refine.question import Question


class ScriptedModel:
    """A test double for the ChatModel protocol: returns preset replies in order (or raises them)."""

    supports_images = supports_logprobs = False

    def __init__(self, replies: list[str | Exception], supports_json_schema: bool = True) -> None:
        self.name, self.usage, self.replies, self.calls = "scripted", UsageMeter(), list(replies), []
        self.supports_json_schema = supports_json_schema

    def chat(self, messages, **kw):
        self.calls.append((list(messages), kw))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return [Completion(reply, finish_reason="stop")]


def verdict(correct: str = "yes", confidence: object = 90, **extra: object) -> str:
    """A judge reply as JSON."""
    return json.dumps(
        {
            "extracted_final_answer": "42",
            "reasoning": "same number",
            "correct": correct,
            "confidence": confidence,
        }
        | extra
    )


def q(gt: str, answer_type: str, **kw) -> Question:
    return Question(id="q1", query=kw.pop("query", "What is it?"), gt=gt, answer_type=answer_type, **kw)


# --- final-answer extraction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Let me think.\nThe mass is large.\nAnswer: 12.011 g/mol", "12.011 g/mol"),
        ("**Final Answer:** Helium", "Helium"),
        ("so we get \\boxed{\\frac{1}{2}} and stop", "\\frac{1}{2}"),
        ("Answer: 3\nOn reflection, \\boxed{4}.", "4"),  # the later statement wins
        ("\\boxed{3}\nAnswer: \\boxed{5}", "5"),
        ("<think>Answer: wrong</think>Thus the answer is argon.", "argon"),
        ("first line\n\nlast line  \n", "last line"),
        ("", ""),
    ],
)
def test_extract_final_answer(response, expected):
    assert extract_final_answer(response) == expected


# --- exact -----------------------------------------------------------------------------------------


def test_normalize_text_drops_case_punctuation_articles_accents_and_spacing():
    assert normalize_text("  The Schrödinger   Equation! ") == "schrodinger equation"
    assert normalize_text("an α-helix") == normalize_text("α helix")
    assert normalize_text("ＨＥＬＩＵＭ") == "helium"  # full-width letters, NFKC
    assert normalize_text("−3.5") == "-3.5"  # a Unicode minus, the decimal point kept
    assert normalize_text("3.5") != normalize_text("35")
    assert normalize_text("\\text{Ar}") == "ar"


@pytest.mark.parametrize(
    ("response", "ok"),
    [
        ("Answer: the Krebs cycle.", True),
        ("Answer: KREBS   cycle", True),
        ("Answer: Calvin cycle", False),
        ("Answer: Krebs cycle and glycolysis", False),
    ],
)
def test_grade_exact(response, ok):
    g = grade(q("Krebs cycle", "exact"), response)
    assert (g.correct, g.method, g.ungraded) == (ok, "rule", False)


# --- multiple choice -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("Answer: C", "C"),
        ("I considered (A) and (B), but (C) fits.", "C"),  # last stated wins
        ("so the answer is c", "C"),
        ("\\boxed{C}", "C"),
        ("\\boxed{\\text{(D)}}", "D"),
        ("**Answer:** (E)", "E"),
        ("Option B is correct.", "B"),
        ("The answer is B, since (A) ignores entropy.", "B"),  # a stated answer beats a mention
        ("Answer: C\nActually, on reflection the answer is D.", "D"),
        ("the answer is a protein", None),  # 'a' is an article, not option A
        ("Answer: I think it is unclear", None),  # 'I' is a pronoun
        ("Answer: K", None),  # not one of A-J
        ("no letter here", None),
    ],
)
def test_extract_choice(text, letter):
    assert extract_choice(text) == letter


def test_extract_choice_matches_an_options_text_when_no_letter_is_stated():
    choices = ("adenine", "guanine", "cytosine", "thymine")
    assert extract_choice("Answer: cytosine", "ABCD", choices) == "C"
    assert extract_choice("The base pairs with G, so it is Cytosine.", "ABCD", choices) == "C"
    assert extract_choice("Answer: uracil", "ABCD", choices) is None


def test_option_letters_follow_the_choices_or_the_query():
    assert option_letters(q("B", "multiple_choice", choices=("x", "y", "z"))) == "ABC"
    listed = "Which?\nA. one\nB. two\nC) three\nD) four\nE. five"
    assert option_letters(q("B", "multiple_choice", query=listed)) == "ABCDE"
    assert option_letters(q("B", "multiple_choice")) == "ABCDEFGHIJ"


def test_grade_multiple_choice():
    question = q("C", "multiple_choice", choices=("H2", "O2", "N2", "Ar"))
    assert grade(question, "Reasoning...\nAnswer: (C)").correct is True
    assert grade(question, "Reasoning...\nAnswer: (B)").correct is False
    assert grade(question, "Final answer: N2").correct is True  # by the option's text
    missing = grade(question, "I cannot decide.")
    assert missing.correct is False and "no option letter" in missing.reason
    assert grade(q("(c)", "multiple_choice", choices=("H2", "O2", "N2")), "Answer: C").correct is True


def test_a_multiple_choice_gt_that_is_no_option_is_a_user_error():
    with pytest.raises(UserError, match=r"multiple-choice gt 'F' is not an option letter \(A-C\)"):
        grade(q("F", "multiple_choice", choices=("x", "y", "z")), "Answer: A")


# --- numeric ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("6.63e-34", "6.63e-34"),
        ("6.63E-34 J s", "6.63e-34"),
        ("6.63 × 10^-34 J·s", "6.63e-34"),
        ("6.63 x 10^{-34}", "6.63e-34"),
        ("6.63·10⁻³⁴", "6.63e-34"),
        ("$6.63 \\times 10^{-34}$", "6.63e-34"),
        ("6.63*10**-34", "6.63e-34"),
        ("10^5 Pa", "1e5"),
        ("1,234,567.8 J/mol", "1234567.8"),
        ("−273.15 °C", "-273.15"),
        ("2.5 mol of O2", "2.5"),  # the 2 of O2 is no number
        ("12 m^-1", "12"),
        ("E = hc/λ = 3.97 × 10^-19 J", "3.97e-19"),  # the result after the last '='
        ("x = 2 × 3 = 6", "6"),
        ("\\frac{3}{4}", "0.75"),
        (".5", "0.5"),
        ("approximately 300 K", "300"),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == Decimal(value)


@pytest.mark.parametrize("text", ["", "no digits", "H2O", "m^2"])
def test_parse_number_finds_none(text):
    assert parse_number(text) is None


def test_numbers_match_is_exact_at_zero_tolerance_and_relative_otherwise():
    assert numbers_match(Decimal("6.63e-34"), Decimal("6.630e-34"), 0.0)
    assert not numbers_match(Decimal("6.6300001e-34"), Decimal("6.63e-34"), 0.0)
    assert numbers_match(Decimal("101"), Decimal("100"), 0.01)  # |1| <= 0.01 * 100
    assert not numbers_match(Decimal("101.01"), Decimal("100"), 0.01)
    assert numbers_match(Decimal("-99"), Decimal("-100"), 0.01)


def test_grade_numeric_uses_the_questions_tolerance():
    question = q("6.62607015e-34", "numeric", rel_tol=0.01, unit="J s")
    assert grade(question, "Using E = hν...\nAnswer: 6.63 × 10^-34 J s").correct is True
    assert grade(question, "Answer: 6.8e-34 J s").correct is False
    assert grade(q("6.63e-34", "numeric"), "Answer: 6.63·10⁻³⁴").correct is True  # exact, other spelling
    none = grade(question, "Answer: unknown")
    assert none.correct is False and "no number" in none.reason


def test_a_question_without_a_gold_answer_or_with_an_unknown_type_is_a_user_error():
    with pytest.raises(UserError, match="question 'q1' has no gold answer"):
        grade(q("  ", "exact"), "Answer: x")
    with pytest.raises(UserError, match="answer_type 'free' is not one of exact, multiple_choice, numeric"):
        grade(q("x", "free"), "Answer: x")
    with pytest.raises(UserError, match="numeric gt 'many' holds no number"):
        grade(q("many", "numeric"), "Answer: 3")


# --- the judge ---------------------------------------------------------------------------------------


def test_parse_judge_reply_accepts_the_schema_and_names_what_breaks_it():
    data, problem = parse_judge_reply(verdict("Yes", 85))
    assert problem == "" and data["correct"] == "yes" and data["confidence"] == 85
    fenced, _ = parse_judge_reply("Here you go:\n```json\n" + verdict("no", 100.0) + "\n```")
    assert fenced is not None and fenced["correct"] == "no" and fenced["confidence"] == 100
    assert parse_judge_reply("correct: yes")[1].startswith("not JSON")
    assert parse_judge_reply("[1, 2]")[1] == "a JSON list, not an object"
    assert (
        "missing reasoning"
        in parse_judge_reply('{"extracted_final_answer": "", "correct": "yes", "confidence": 1}')[1]
    )
    assert "not 'yes' or 'no'" in parse_judge_reply(verdict("maybe"))[1]
    assert "0-100" in parse_judge_reply(verdict(confidence=150))[1]
    assert "0-100" in parse_judge_reply(verdict(confidence="90"))[1]
    assert "0-100" in parse_judge_reply(verdict(confidence=True))[1]
    # prose with braces of its own before the verdict: the first span that follows the schema counts
    data, problem = parse_judge_reply("Using {the rubric}: " + verdict("no", 5) + " {done}")
    assert problem == "" and data["correct"] == "no" and data["confidence"] == 5


def test_judge_with_a_valid_reply_grades_in_one_call():
    model = ScriptedModel([verdict("yes", 80)])
    g = grade(q("42", "exact", query="What is six times seven?"), "<think>hmm</think>Answer: 42", model)
    assert (g.correct, g.method, g.ungraded, g.confidence, g.extracted) == (True, "judge", False, 80, "42")
    assert g.reason == "same number"
    ((messages, kw),) = model.calls
    prompt = messages[0]["content"]
    assert "What is six times seven?" in prompt and "[correct_answer]: 42" in prompt
    assert "hmm" not in prompt  # only the text after </think> is judged, as the authors do
    assert kw["json_schema"] == JUDGE_SCHEMA and kw["temperature"] == 0.0
    assert set(JUDGE_SCHEMA["required"]) == {"extracted_final_answer", "reasoning", "correct", "confidence"}
    assert (
        "{question}" in JUDGE_PROMPT and "{response}" in JUDGE_PROMPT and "{correct_answer}" in JUDGE_PROMPT
    )


def test_judge_retries_once_after_a_broken_reply():
    model = ScriptedModel(["correct: yes", verdict("no", 60)])
    g = grade(q("42", "exact"), "Answer: 41", model)
    assert (g.correct, g.ungraded, g.confidence) == (False, False, 60)
    assert len(model.calls) == 2
    retry = model.calls[1][0]
    assert retry[1] == {"role": "assistant", "content": "correct: yes"}  # the broken reply is shown back
    assert "not JSON" in retry[2]["content"]


def test_judge_marks_the_item_ungraded_after_two_broken_replies_and_summarize_counts_it():
    model = ScriptedModel(["{not json", '{"correct": "yes"}'])
    g = grade(q("42", "exact"), "Answer: 42", model)
    assert g.correct is None and g.ungraded and g.method == "judge"
    assert g.extracted == "42" and "missing" in g.reason
    assert len(model.calls) == 2  # one retry, no more
    good = grade(q("42", "exact"), "Answer: 42", ScriptedModel([verdict("yes")]))
    counts = summarize([g, good, grade(q("42", "exact"), "Answer: 7")])
    assert counts == {"n": 3, "correct": 1, "ungraded": 1, "accuracy": 100 / 3, "accuracy_graded": 50.0}


def test_judge_treats_a_failed_call_as_a_broken_reply_but_lets_user_errors_through():
    model = ScriptedModel([LLMError("server returned an error: grammar"), verdict("yes")])
    assert grade(q("42", "exact"), "Answer: 42", model).correct is True
    with pytest.raises(LLMConnectionError):
        grade(q("42", "exact"), "Answer: 42", ScriptedModel([LLMConnectionError("cannot reach 127.0.0.1")]))


def test_judge_without_json_schema_support_asks_in_the_prompt_only():
    model = ScriptedModel([verdict("yes")], supports_json_schema=False)
    assert grade(q("42", "exact"), "Answer: 42", model).correct is True
    assert model.calls[0][1]["json_schema"] is None


def test_grade_mode_switch():
    model = ScriptedModel([])
    assert grade(q("42", "exact"), "Answer: 42", model, mode="rule").method == "rule"
    assert model.calls == []
    with pytest.raises(UserError, match="grading mode 'judge' needs a judge_model"):
        grade(q("42", "exact"), "Answer: 42", mode="judge")
    with pytest.raises(UserError, match="grading mode must be one of rule, judge; got 'llm'"):
        grade(q("42", "exact"), "Answer: 42", mode="llm")
