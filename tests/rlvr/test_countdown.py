from collections import Counter

import numpy as np
import pytest

from iclr26.rlvr.tasks import (
    COUNTDOWN_CAP,
    COUNTDOWN_LARGE,
    GENERATORS,
    MAX_LEVELS,
    Problem,
    make_problems,
    verify,
)
from iclr26.rlvr.tokenizer import CharTokenizer
from iclr26.scaf_grpo.hints import LEVELS, TIERS, hint_text


def _numbers(p: Problem) -> list[int]:
    return [int(x) for x in p.question.split(">")[0].split(",")]


@pytest.mark.parametrize("level", range(1, MAX_LEVELS["countdown"] + 1))
def test_worked_solutions_verify_at_every_level(level):
    for p in make_problems("countdown", level, 200, seed=level):
        nums = _numbers(p)
        assert len(nums) == level + 1 and nums == sorted(nums)
        assert sorted(p.operands) == nums  # the chain uses every number once
        assert p.question.endswith(f">{p.answer}") and int(p.answer) not in nums
        assert sum(n in COUNTDOWN_LARGE for n in nums) == (level >= 3)  # one large number from level 3
        assert len(p.steps) == level
        results = [int(s.split("=")[1]) for s in p.steps]
        assert all(1 <= r <= COUNTDOWN_CAP for r in results) and results[-1] == int(p.answer)
        assert verify(p, p.solution) == verify(p, p.solution + "trailing text ignored")
        assert verify(p, p.solution).reward == 1.0


def test_generation_is_seeded_and_levels_checked():
    assert make_problems("countdown", 3, 5, 0) == make_problems("countdown", 3, 5, 0)
    assert make_problems("countdown", 3, 5, 0) != make_problems("countdown", 3, 5, 1)
    for bad in (0, 6):
        with pytest.raises(ValueError, match=r"level must be an int in 1\.\.5 for countdown"):
            make_problems("countdown", bad, 1, 0)
    with pytest.raises(ValueError, match="for countdown"):
        GENERATORS["countdown"](2.0, np.random.default_rng(0))


# Q:3,7,25,50>82 — a hand-made problem so that each wrong completion below is wrong for one reason.
P = Problem("countdown", 3, "3,7,25,50>82", ("50+25=75", "75+7=82"), "82", (50, 25, 7, 3))


@pytest.mark.parametrize(
    ("completion", "reward", "parsed"),
    [
        ("50+25=75\n75+7=82\nA:82\n", 1.0, True),
        ("7+3=10\n10*50=500\n500-25=475\nA:475\n", 0.0, True),  # a correct derivation of another number
        ("25+7=32\n50+32=82\nA:82", 1.0, True),  # another valid order, no final newline
        ("7*3=21\n21+50=71\n71+25=96\n96-7=89\nA:89\n", 0.0, True),  # 7 used twice
        ("50+25=75\n75+7=83\nA:83\n", 0.0, True),  # wrong arithmetic
        ("50+25=75\n75+75=150\nA:150\n", 0.0, True),  # a result reused
        ("50+32=82\nA:82\n", 0.0, True),  # 32 is neither given nor derived
        ("50+25=75\n75+7=82\nA:81\n", 0.0, True),  # A: value is not the target
        ("50+25=75\nA:82\n", 0.0, True),  # last result is not the target
        ("3-7=-4\n50+25=75\n75+7=82\nA:82\n", 0.0, True),  # negative intermediate result
        ("A:82\n", 0.0, True),  # an answer without a derivation
        ("50+25=75\n75+7=82\n", 0.0, False),  # missing A: line
        ("50+25=75\n75+7=82\nA:\n", 0.0, False),  # A: without a number
        ("50+25=75\n75+7=82A:82\n", 0.0, False),  # A: not on its own line
        ("50+25=75\n75+7=82\nA:82 done\n", 0.0, False),  # junk after the answer on its line
        ("use 50 and 25\n75+7=82\nA:82\n", 0.0, False),  # a scratchpad line that is not a step
        ("50/25=2\nA:82\n", 0.0, False),  # division is not an operation
        ("050+25=75\n75+7=82\nA:82\n", 0.0, False),  # leading zeros
        ("50+25=75\n\n75+7=82\nA:82\n", 0.0, False),  # blank line
        ("", 0.0, False),
        ("%$#@!\n\x00\n" + "9" * 5000, 0.0, False),  # garbage
        ("9" * 5000 + "*2=1\nA:82\n", 0.0, False),  # a number too long to be a step
    ],
)
def test_verifier_rule(completion, reward, parsed):
    v = verify(P, completion)
    assert (v.reward, v.parsed) == (reward, parsed)


def test_verifier_counts_duplicate_numbers_and_results_as_a_multiset():
    p = Problem("countdown", 2, "4,4,5>13", ("4+4=8", "8+5=13"), "13", (4, 4, 5))
    assert verify(p, "4+4=8\n8+5=13\nA:13").reward == 1.0  # both 4s are given
    assert verify(p, "5-4=1\n4*1=4\n4+4=8\nA:8\n") == (v := verify(p, "4+4=8\n4+5=9\nA:9"))
    assert (v.reward, v.parsed) == (0.0, True)  # a third 4 is neither given nor derived
    q = Problem("countdown", 2, "1,2,7>14", ("2-1=1", "7*2=14"), "14", (2, 1, 7))
    assert verify(q, "2-1=1\n7*2=14\nA:14\n").reward == 0.0  # 2 was spent in the first line
    assert verify(q, "2-1=1\n1+1=2\n7*2=14\nA:14\n").reward == 0.0  # the result 1 and the given 1 are gone
    assert verify(q, "2-1=1\n7*1=7\n7+7=14\nA:14\n").reward == 0.0  # the given 7 was spent on 7*1
    assert verify(q, "7*1=7\n2*7=14\nA:14\n").reward == 1.0  # the derived 7 stands in for the given one


def test_arithmetic_verification_is_unchanged():
    p = make_problems("addition", 2, 1, seed=0)[0]
    assert verify(p, f"junk\nA:{p.answer}") == verify(p, p.solution)  # arithmetic: A: anywhere counts


def test_every_character_round_trips_through_the_tokenizer():
    tok = CharTokenizer()
    for level in range(1, MAX_LEVELS["countdown"] + 1):
        for p in make_problems("countdown", level, 50, seed=7):
            texts = [p.prompt + p.solution] + [
                p.hinted_prompt(hint_text(p, t, lv)) + p.solution for t in TIERS for lv in LEVELS
            ]
            for text in texts:
                assert tok.decode(tok.encode(text, bos=True, eos=True)) == text


def test_planning_hint_is_the_combination_order():
    p = make_problems("countdown", 5, 1, seed=3)[0]
    full = hint_text(p, "planning", 4)
    assert full == "use " + ",".join(map(str, p.operands))
    assert Counter(p.operands) == Counter(_numbers(p))
    assert not any(c.isdigit() for c in hint_text(p, "knowledge", 4))  # rules, no numbers
