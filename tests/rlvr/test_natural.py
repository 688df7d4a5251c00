"""Natural-language prompts for pretrained chat models: the lenient answer reader, the countdown
expression parser (never eval), the GSM-style word problems, and their hint tiers."""

import numpy as np
import pytest

from iclr26.rlvr.answers import countdown_correct, final_expression, final_number, parse_expression
from iclr26.rlvr.tasks import STYLES, make_problems, verify
from iclr26.rlvr.word_problems import word_problem
from iclr26.scaf_grpo.hints import hint_ladder, hint_text

TASKS = ("addition", "multiplication", "countdown", "gsm")


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Answer: 936", 936),
        ("347 + 589 = 936.\nThe answer is 1,234 apples.", 1234),
        ("The answer to this question is: 100\n\nThe answer to the question", 100),  # last 'answer' has none
        ("so we get \\boxed{42} and then 7", 42),
        ("first 12, then 15, finally 19.", 19),
        ("Answer: −5", -5),
        ("ANSWER 7 (not 8)", 7),
        ("no digits here", None),
    ],
)
def test_final_number(text, number):
    assert final_number(text) == number


def test_parse_expression_is_a_parser_not_eval():
    assert parse_expression("(50 + 25) + 7") == (82, [50, 25, 7])
    assert parse_expression("3 × 4 - 2*(1+1)") == (8, [3, 4, 2, 1, 1])
    assert parse_expression("3 x 4") == (12, [3, 4])
    for bad in ("__import__('os').system('true')", "2**10", "(1+2", "1+", "7/7", ""):
        with pytest.raises(ValueError):
            parse_expression(bad)


def test_countdown_rule():
    numbers = (3, 7, 25, 50)
    assert countdown_correct("50 + 25 + 7", numbers, 82) == (True, True)
    assert countdown_correct("50 + 25 + 7", numbers, 83) == (True, False)
    assert countdown_correct("50 + 25 + 7 - 3 + 3", numbers, 82) == (True, False)  # 3 used twice
    assert countdown_correct("50 + 32", numbers, 82) == (True, False)  # 32 is not given
    assert countdown_correct("50 +", numbers, 82) == (False, False)
    assert final_expression("Let me try.\nAnswer: (50 + 25) + 7 = 82") == "(50 + 25) + 7"
    assert final_expression("so 50 + 25 + 7 = 82 works") == "50 + 25 + 7"
    assert final_expression("Answer: 82 = 50+25+7") == "50+25+7"
    assert final_expression("I cannot do it.") is None


def _oracle_expression(problem) -> str:
    """The worked countdown chain as one parenthesised expression."""
    expr, acc = None, None
    for step in problem.steps:
        left, z = step.split("=")
        op = next(c for c in left[1:] if c in "+-*")
        x, y = left.split(op, 1)
        if expr is None:
            expr = f"{x} {op} {y}"
        elif int(x) == acc:
            expr = f"({expr}) {op} {y}"
        else:
            expr = f"{x} {op} ({expr})"
        acc = int(z)
    return expr


def _oracle(problem) -> str:
    work = "\n".join(problem.steps)
    final = _oracle_expression(problem) if problem.task == "countdown" else problem.answer
    return f"Let me work it out.\n{work}\nAnswer: {final}"


@pytest.mark.parametrize("task", TASKS)
def test_natural_oracle_passes_and_null_fails(task):
    for level in (1, 2, 3):
        for p in make_problems(task, level, 20, seed=1, style="natural"):
            assert p.style == "natural" and "Answer:" in p.prompt
            assert verify(p, _oracle(p)).reward == 1.0, (p, _oracle(p))
            null = verify(p, "I am not sure how to solve this.")
            assert null.reward == 0.0 and not null.parsed


def test_natural_verifier_rejects_wrong_answers():
    p = make_problems("addition", 3, 1, seed=0, style="natural")[0]
    assert verify(p, f"Answer: {int(p.answer) + 1}") == verify(p, f"Answer: {int(p.answer) - 10}")
    assert verify(p, f"Answer: {int(p.answer) + 1}").reward == 0.0
    assert verify(p, f"The sum is {p.answer}").reward == 1.0  # no marker: the last number


def test_styles_share_the_problems():
    for task in TASKS:
        plain = make_problems(task, 2, 5, seed=3)
        natural = make_problems(task, 2, 5, seed=3, style="natural")
        assert [p.answer for p in plain] == [p.answer for p in natural]
        assert all(p.prompt.startswith("Q:") for p in plain)
    assert STYLES == ("scratchpad", "natural")
    with pytest.raises(ValueError, match="style"):
        make_problems("gsm", 1, 1, 0, style="prose")


def _replay(steps: tuple[str, ...]) -> int:
    value = None
    for step in steps:
        left, z = step.split("=")
        op = next(c for c in left[1:] if c in "+-*/")
        x, y = (int(v) for v in left.split(op, 1))
        out = {"+": x + y, "-": x - y, "*": x * y, "/": x // y}[op]
        assert out == int(z) and (op != "/" or x % y == 0)
        value = out
    return value


@pytest.mark.parametrize("level", [1, 2, 4, 8])
def test_word_problems_have_computed_answers(level):
    rng = np.random.default_rng(level)
    for _ in range(50):
        question, steps, answer = word_problem(level, rng)
        assert question.count(".") == level + 1 and question.endswith("have now?")
        assert _replay(steps) == answer and 1 <= answer <= 999
        assert level <= len(steps) <= 2 * level
    a = make_problems("gsm", 3, 4, seed=9)
    assert a == make_problems("gsm", 3, 4, seed=9) and a != make_problems("gsm", 3, 4, seed=10)
    with pytest.raises(ValueError, match=r"1\.\.8 for gsm"):
        make_problems("gsm", 9, 1, 0)


def test_gsm_and_natural_hints():
    p = make_problems("gsm", 4, 1, seed=2, style="natural")[0]
    ladder = hint_ladder(p)
    assert len(ladder) == 12 and [h.rank for h in ladder] == list(range(12))
    assert hint_text(p, "solution", 4) == "; ".join(p.steps)  # the last rung is the whole solution
    plan = hint_text(p, "planning", 4)
    assert plan.startswith("Plan: ") and plan.count(", then ") == len(p.steps) - 1
    assert hint_text(p, "knowledge", 1).startswith("Follow the amount")
    assert p.hinted_prompt(ladder[0].text) == f"{p.prompt}\nHint: {ladder[0].text}"
    q = make_problems("addition", 4, 1, seed=2)[0]  # the scratchpad style keeps its compact hints
    assert hint_text(q, "solution", 2) == ";".join(q.steps[:2])
    assert hint_text(q, "knowledge", 2) == "add columns right to left; line: digit+digit+carry=sum"
