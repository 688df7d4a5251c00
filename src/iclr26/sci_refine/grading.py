"""Grading answers to scientific questions: rule graders per answer type and an LLM judge.

Eigen-1 (arXiv 2509.21193) scores HLE Bio/Chem with an o3-mini judge whose reply is constrained to a
JSON schema {extracted_final_answer, reasoning, correct: yes|no, confidence} (the authors'
`functions/eigen1_hle.py`, `configs/judge_config.yaml`). `judge` is that judge with our own prompt
(`JUDGE_PROMPT`); a reply that breaks the schema gets one retry, then the item is "ungraded".

The rule graders need no model:
- exact: `normalize_text` on both sides (Unicode NFKC, case, punctuation, articles, whitespace);
- multiple_choice: `extract_choice` finds the option letter ("Answer: C", "(C)", "\\boxed{C}", ...)
  or matches an option's text;
- numeric: `parse_number` reads the final number (scientific notation in every usual spelling,
  thousands separators, a trailing unit) and `numbers_match` compares it within `Question.rel_tol`.

`grade(question, response, judge_model=None)` is the entry point; `summarize` counts a set of grades.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.jsontext import balanced_spans
from iclr26.core.llm.base import ChatModel, LLMError, Message
from iclr26.sci_refine.question import ANSWER_TYPES, Question

GRADE_METHODS = ("rule", "judge")
"""rule: the answer type's parser; judge: an LLM with JSON-schema output"""

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DEFAULT_OPTION_COUNT = 10  # letters A-J when a question lists no choices (SuperGPQA has up to 10)


@dataclass(frozen=True)
class Grade:
    """The verdict on one response."""

    correct: bool | None
    """True / False; None when the item is ungraded"""
    extracted: str
    """the final answer read from the response (by the rules or by the judge)"""
    method: str
    """one of GRADE_METHODS"""
    ungraded: bool = False
    """True: the judge's replies broke the schema twice, so no verdict (counted, not an error)"""
    confidence: int | None = None
    """the judge's 0-100 confidence; None for rule grades"""
    reason: str = ""
    """the judge's reasoning, or why the item is ungraded or wrong"""


# ---------------------------------------------------------------------------------------------------
# Final-answer extraction

_THINK_END = ("</think>", "</execution_results>")  # the authors judge only the text after these
# Model text: the runs are possessive (`*+`) and the answer is matched up to its last character that is
# not trailing markup, instead of lazily; the same matches as the lazy patterns, in linear time, where
# those took seconds to minutes on long runs of blanks (tests/sci_refine/test_answer_patterns.py).
_ANSWER_LINE = re.compile(
    r"^[ \t>*#_-]*+(?:final\s+answer|answer)(?:\s+is)?[ \t*_]*+[:：][ \t*_]*+"
    r"(?P<a>(?:.*[^ \t*_\n])?)[ \t*_]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_IS = re.compile(
    r"\b(?:final\s+)?answer\s+is\s*+[:：]?\s*+(?P<a>(?:[^\n]*[^\s.*_])?)[\s.*_]*$", re.I | re.M
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def _after_reasoning(response: str) -> str:
    """The part of `response` after its last </think> or </execution_results> tag."""
    for tag in _THINK_END:
        response = response.rsplit(tag, 1)[-1]
    return response


def _boxed_spans(text: str) -> list[tuple[int, str]]:
    """(start, content) of every \\boxed{...} in `text`, braces balanced; unclosed ones skipped."""
    out = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append((m.start(), text[m.end() : i - 1]))
    return out


def _unbox(text: str) -> str:
    """The content of the last \\boxed{} in `text`, or `text` itself when it has none."""
    boxes = _boxed_spans(text)
    return boxes[-1][1].strip() if boxes else text.strip()


def extract_final_answer(response: str) -> str:
    """The final answer stated in a (long, reasoning) response: the later of its last "Answer:" line
    and its last \\boxed{}, else its last non-empty line; text before </think> is ignored."""
    text = _after_reasoning(response)
    candidates = [(start, content) for start, content in _boxed_spans(text)]
    for pattern in (_ANSWER_LINE, _ANSWER_IS):
        candidates += [(m.start(), m.group("a")) for m in pattern.finditer(text) if m.group("a").strip()]
    if candidates:
        return _unbox(max(candidates, key=lambda c: c[0])[1])
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _unbox(lines[-1]) if lines else ""


# ---------------------------------------------------------------------------------------------------
# exact

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_LATEX_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mathbf|operatorname)\s*\{([^{}]*)\}")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d"), "-")


def normalize_text(text: str) -> str:
    """`text` for exact matching (SQuAD's answer normalisation, made Unicode-aware): NFKC, accents
    dropped, case-folded, LaTeX \\text{} unwrapped, punctuation and the articles a/an/the dropped,
    whitespace collapsed; '.' and ',' between digits and a leading minus are kept."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).translate(_DASHES).casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))  # "ö" -> "o"
    text = _LATEX_TEXT.sub(r"\1", text).replace("$", " ")
    chars = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P") or ch in "^`":
            before, after = text[i - 1 : i], text[i + 1 : i + 2]
            keep = (ch in ".," and before.isdigit() and after.isdigit()) or (
                ch == "-" and after.isdigit() and not before.isalnum()
            )
            chars.append(ch if keep else " ")
        else:
            chars.append(ch)
    return " ".join(_ARTICLES.sub(" ", "".join(chars)).split())


def grade_exact(question: Question, response: str) -> Grade:
    """Exact match of the response's final answer and the gold answer, both `normalize_text`-ed."""
    extracted = extract_final_answer(response)
    ok = normalize_text(extracted) == normalize_text(question.gt) and bool(normalize_text(question.gt))
    return Grade(ok, extracted, "rule")


# ---------------------------------------------------------------------------------------------------
# multiple choice

# Strong statements of a chosen option, then weak ones; within the strongest tier found, the letter
# stated last wins. A lower-case letter counts only when nothing but punctuation or the end follows it,
# so "the answer is a protein" states no option.
_L = r"(?P<l>[A-Za-z])"
_END = r"(?=\s*(?:$|[).,;:!?\]}*]|\n))"
_UPPER_END = r"(?![A-Za-z0-9])"
_STRONG = (
    re.compile(r"\\(?:boxed|fbox)\s*+\{\s*+(?:\\text\s*+\{)?\s*+\(?" + _L + r"\)?\s*+\}?\s*+\}"),
    re.compile(
        r"(?:answer|option|choice)(?:\s++(?:is|would\s++be|should\s++be|must\s++be))?\s*+(?:[:：]|=)?\s*+"
        r"(?:option\s++|choice\s++)?[*_\s]*+[(\[]?" + _L + r"[)\]]?",
        re.IGNORECASE,
    ),
)
_WEAK = (
    re.compile(r"\((?P<l>[A-Z])\)"),
    re.compile(r"^[ \t*_]*(?P<l>[A-Z])[ \t*_]*(?:[.):][ \t]*|$)", re.MULTILINE),
)


def option_letters(question: Question) -> str:
    """The letters a question's options use: one per choice, else those lettered lines of the query
    ("A." / "(A)" / "A)") show, else A-J."""
    if question.choices:
        return LETTERS[: len(question.choices)]
    listed = re.findall(r"^[ \t]*\(?([A-Z])[).:]\s+\S", question.query, re.MULTILINE)
    if listed:
        return LETTERS[: LETTERS.index(max(listed)) + 1]
    return LETTERS[:DEFAULT_OPTION_COUNT]


def _stated_letter(match: re.Match[str], text: str, valid: str) -> str | None:
    """The option letter a pattern match states, or None when it is not one (case and context)."""
    letter = match.group("l")
    if letter.upper() not in valid:
        return None
    rest = text[match.end("l") :]
    if letter.islower():
        return letter.upper() if re.match(_END, rest) else None
    if letter == "I" and re.match(r"[ \t]+[a-z]", rest):  # "Answer: I think ..." states no option
        return None
    return letter if re.match(_UPPER_END, rest) else None


def extract_choice(
    text: str, letters: str = LETTERS[:DEFAULT_OPTION_COUNT], choices: Sequence[str] = ()
) -> str | None:
    """The option letter `text` states (the last one, in the strongest form present), else the letter of
    the one option whose text the final answer matches; None when neither."""
    for tier in (_STRONG, _WEAK):
        found = [
            (m.start("l"), letter)
            for pattern in tier
            for m in pattern.finditer(text)
            if (letter := _stated_letter(m, text, letters)) is not None
        ]
        if found:
            return max(found)[1]
    if choices:
        answer = normalize_text(extract_final_answer(text))
        options = [normalize_text(c) for c in choices]
        equal = [i for i, o in enumerate(options) if o and o == answer]
        if len(equal) == 1:
            return LETTERS[equal[0]]
        inside = [i for i, o in enumerate(options) if o and re.search(rf"\b{re.escape(o)}\b", answer)]
        if len(inside) == 1:
            return LETTERS[inside[0]]
    return None


def _gold_letter(question: Question) -> str:
    """The gold option letter of a multiple-choice question; a UserError when gt names none."""
    letters = option_letters(question)
    gt = question.gt.strip().strip("()[]. ").upper()
    if len(gt) == 1 and gt in letters:
        return gt
    if question.choices:
        for i, text in enumerate(question.choices):
            if normalize_text(text) == normalize_text(question.gt):
                return LETTERS[i]
    raise UserError(
        f"question {question.id!r}: multiple-choice gt {question.gt!r} is not an option letter "
        f"({letters[0]}-{letters[-1]}) nor an option's text"
    )


def grade_multiple_choice(question: Question, response: str) -> Grade:
    """The option letter the response chooses (its final answer first, then the whole text) against gt."""
    gold = _gold_letter(question)
    letters = option_letters(question)
    final = extract_final_answer(response)
    letter = extract_choice(final, letters, question.choices) or extract_choice(
        _after_reasoning(response), letters, question.choices
    )
    if letter is None:
        return Grade(False, final, "rule", reason="no option letter found")
    return Grade(letter == gold, letter, "rule")


# ---------------------------------------------------------------------------------------------------
# numeric

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_MANTISSA = r"(?P<sign>[-+]?)(?P<m>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
_EXP_E = r"(?:[eE](?P<e>[-+]?\d+))"
_TIMES = r"(?:\s*+(?:[×xX*·⋅∙]|\\times|\\cdot)\s*+)"
_EXP_TEN = r"(?:10\s*+(?:\^|\*\*)\s*+\{?\s*+\(?(?P<p>[-+]?\s*+\d+)\)?\s*+\}?|10(?P<u>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
# a number not glued to a letter, '^' or a digit before it (so "O2" and "m^-1" hold no numbers)
_NUMBER = re.compile(
    r"(?<![A-Za-z_^\d.])(?:(?P<bare>" + _EXP_TEN.replace("?P<p>", "?P<bp>").replace("?P<u>", "?P<bu>") + r")"
    r"|" + _MANTISSA + r"(?:" + _EXP_E + r"|" + _TIMES + _EXP_TEN + r")?"
    r")"
)
_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{\s*(?P<a>\d+(?:\.\d+)?)\s*\}\s*\{\s*(?P<b>\d+(?:\.\d+)?)\s*\}"
    r"|(?<![\w.^/])(?P<c>\d+(?:\.\d+)?)\s*/\s*(?P<d>\d+(?:\.\d+)?)(?![\w.^/])"
)
_RESULT_SPLIT = re.compile(r"=|≈|≃|~|\\approx|\\sim")


def _to_decimal(m: re.Match[str]) -> Decimal:
    """The value of one `_NUMBER` match, exactly (as a Decimal)."""
    if m.group("bare"):
        power = m.group("bp") or m.group("bu").translate(_SUPERSCRIPTS)
        return Decimal(f"1e{power.replace(' ', '')}")
    mantissa = m.group("sign") + m.group("m").replace(",", "")
    exponent = m.group("e") or m.group("p") or (m.group("u") or "").translate(_SUPERSCRIPTS) or "0"
    return Decimal(f"{mantissa}e{exponent.replace(' ', '')}")


def _fraction_value(m: re.Match[str]) -> str:
    """A fraction of plain numbers ("\\frac{1}{2}", "3/4") written as its decimal value."""
    num, den = Decimal(m.group("a") or m.group("c")), Decimal(m.group("b") or m.group("d"))
    return m.group(0) if den == 0 else f" {num / den} "


def parse_number(text: str) -> Decimal | None:
    """The result number stated in `text` ("6.63e-34", "6.63 × 10^-34", "6.63·10⁻³⁴", "1,234.5 J", "3/4"):
    the first number after the last '=' or '≈' (the text itself when it has none); None if none."""
    text = unicodedata.normalize("NFC", text).translate(_DASHES)
    text = text.replace("\u202f", "").replace("\u2009", "").replace("{,}", ",").replace("$", " ")
    text = _FRACTION.sub(_fraction_value, text)
    for part in reversed(_RESULT_SPLIT.split(text)):  # the result side first, then further left
        for m in _NUMBER.finditer(part):
            try:
                return _to_decimal(m)
            except InvalidOperation:
                continue
    return None


def numbers_match(predicted: Decimal, gold: Decimal, rel_tol: float) -> bool:
    """|predicted − gold| ≤ rel_tol · |gold|; exact equality when rel_tol is 0 (or gold is 0)."""
    if rel_tol < 0:
        raise UserError(f"rel_tol must be >= 0; got {rel_tol!r}")
    return abs(predicted - gold) <= Decimal(repr(rel_tol)) * abs(gold)


def grade_numeric(question: Question, response: str) -> Grade:
    """The response's final number within `question.rel_tol` of the gold number."""
    gold = parse_number(question.gt)
    if gold is None:
        raise UserError(f"question {question.id!r}: numeric gt {question.gt!r} holds no number")
    extracted = extract_final_answer(response)
    value = parse_number(extracted)
    if value is None:
        return Grade(False, extracted, "rule", reason="no number found in the final answer")
    return Grade(numbers_match(value, gold, question.rel_tol), extracted, "rule")


# ---------------------------------------------------------------------------------------------------
# rules and the judge

_RULES = {"exact": grade_exact, "multiple_choice": grade_multiple_choice, "numeric": grade_numeric}
assert tuple(_RULES) == ANSWER_TYPES


def check_question(question: Question) -> None:
    """A UserError naming the question when it cannot be graded (no gold answer, unknown type)."""
    if question.answer_type not in ANSWER_TYPES:
        raise UserError(
            f"question {question.id!r}: answer_type {question.answer_type!r} is not one of "
            f"{', '.join(ANSWER_TYPES)}"
        )
    if not question.gt.strip():
        raise UserError(f"question {question.id!r} has no gold answer (gt is empty); it cannot be graded")
    if question.rel_tol < 0:
        raise UserError(f"question {question.id!r}: rel_tol must be >= 0; got {question.rel_tol!r}")


def grade_rule(question: Question, response: str) -> Grade:
    """The rule grade for the question's answer type."""
    check_question(question)
    return _RULES[question.answer_type](question, response)


JUDGE_PROMPT = """\
You are grading an answer to a science question. Compare the final answer in the [response] with the \
[correct_answer]; do not solve the question yourself and do not argue for a different answer.

[question]: {question}

[response]: {response}

[correct_answer]: {correct_answer}

Reply with one JSON object with exactly these keys:
- "extracted_final_answer": the final answer the [response] commits to, copied as written; "None" if it \
commits to none.
- "reasoning": one or two sentences on whether that answer and the [correct_answer] mean the same thing, \
looking only at meaningful differences.
- "correct": "yes" if they agree (for a number, within a small rounding margin), "no" if they differ, \
the response is ambiguous, or it gives no final answer.
- "confidence": an integer from 0 to 100, the confidence the [response] states in its answer; 100 if it \
states none.
"""
"""Our wording of the authors' HLE judge instruction (configs/judge_config.yaml); fields: question,
response, correct_answer."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "extracted_final_answer": {"type": "string"},
        "reasoning": {"type": "string"},
        "correct": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["extracted_final_answer", "reasoning", "correct", "confidence"],
    "additionalProperties": False,
}
"""The judge's reply format, as the authors' pydantic `ExtractedAnswer`"""

_RETRY_NOTE = (
    "That reply does not follow the required format ({problem}). Reply again with only the JSON object "
    'with the keys "extracted_final_answer", "reasoning", "correct" ("yes" or "no") and "confidence" (0-100).'
)
JUDGE_ATTEMPTS = 2  # one call, and one retry when the reply breaks the schema


def parse_judge_reply(text: str) -> tuple[dict[str, Any] | None, str]:
    """(the reply as a dict, "") when it follows `JUDGE_SCHEMA`, else (None, what is wrong).

    The first `{...}` span that does (`core.jsontext`: a ```json fence or prose around it is
    tolerated) is taken; "Yes"/"NO" count as yes/no. Otherwise the first span's problem is named.
    """
    body = text.strip()
    problems = []
    for candidate in balanced_spans(body) or [body]:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as e:
            problems.append(f"not JSON: {e.msg}")
            continue
        verdict, problem = _judge_fields(data)
        if verdict is not None:
            return verdict, ""
        problems.append(problem)
    return None, problems[0]


def _judge_fields(data: Any) -> tuple[dict[str, Any] | None, str]:
    """`data` with `correct` lower-cased and `confidence` an int when it follows `JUDGE_SCHEMA`."""
    if not isinstance(data, dict):
        return None, f"a JSON {type(data).__name__}, not an object"
    missing = [key for key in JUDGE_SCHEMA["required"] if key not in data]
    if missing:
        return None, f"missing {', '.join(missing)}"
    for key in ("extracted_final_answer", "reasoning"):
        if not isinstance(data[key], str):
            return None, f"{key} is not a string"
    correct = data["correct"].strip().lower() if isinstance(data["correct"], str) else None
    if correct not in ("yes", "no"):
        return None, f"correct is {data['correct']!r}, not 'yes' or 'no'"
    confidence = data["confidence"]
    if isinstance(confidence, float) and confidence.is_integer():
        confidence = int(confidence)
    if isinstance(confidence, bool) or not isinstance(confidence, int) or not 0 <= confidence <= 100:
        return None, f"confidence is {data['confidence']!r}, not an integer in 0-100"
    return {**data, "correct": correct, "confidence": confidence}, ""


def judge(
    question: Question,
    response: str,
    model: ChatModel,
    *,
    max_tokens: int = 512,
    max_response_chars: int = 8000,
    seed: int | None = 0,
) -> Grade:
    """The LLM judge's grade: one JSON-schema call, one retry if the reply breaks the schema, then
    "ungraded". Only the response's text after </think> is shown, its last `max_response_chars`."""
    check_question(question)
    shown = _after_reasoning(response).strip()[-max_response_chars:]
    prompt = JUDGE_PROMPT.format(question=question.query, response=shown, correct_answer=question.gt)
    messages: list[Message] = [{"role": "user", "content": prompt}]
    schema = JUDGE_SCHEMA if getattr(model, "supports_json_schema", False) else None
    problem = ""
    for _ in range(JUDGE_ATTEMPTS):
        try:
            reply = model.chat(
                messages, temperature=0.0, max_tokens=max_tokens, seed=seed, json_schema=schema
            )
            text = reply[0].text if reply else ""
        except UserError:
            raise  # an unreachable server or an unsupported option: the user's to fix, not the item's
        except LLMError as e:
            text, problem = "", f"the call failed: {e}"
        else:
            data, problem = parse_judge_reply(text)
            if data is not None:
                return Grade(
                    data["correct"] == "yes",
                    data["extracted_final_answer"],
                    "judge",
                    confidence=data["confidence"],
                    reason=data["reasoning"],
                )
        messages = [
            *messages[:1],
            {"role": "assistant", "content": text},
            {"role": "user", "content": _RETRY_NOTE.format(problem=problem)},
        ]
    return Grade(
        None,
        extract_final_answer(response),
        "judge",
        ungraded=True,
        reason=f"judge reply broke the schema {JUDGE_ATTEMPTS} times: {problem}",
    )


def grade(
    question: Question, response: str, judge_model: ChatModel | None = None, *, mode: str | None = None
) -> Grade:
    """Grade one response: by the rules (default), or by the LLM judge when `judge_model` is given
    (or `mode="judge"`, which needs it)."""
    mode = mode or ("judge" if judge_model is not None else "rule")
    if mode not in GRADE_METHODS:
        raise UserError(f"grading mode must be one of {', '.join(GRADE_METHODS)}; got {mode!r}")
    if mode == "judge":
        if judge_model is None:
            raise UserError("grading mode 'judge' needs a judge_model; pass one or use mode='rule'")
        return judge(question, response, judge_model)
    return grade_rule(question, response)


def summarize(grades: Iterable[Grade]) -> dict[str, float | int]:
    """Counts over grades: n, correct, ungraded, accuracy (ungraded count as wrong) and accuracy over
    the graded ones (percent; 0 when there are none)."""
    items = list(grades)
    n, correct = len(items), sum(g.correct is True for g in items)
    ungraded = sum(g.ungraded for g in items)
    graded = n - ungraded
    return {
        "n": n,
        "correct": correct,
        "ungraded": ungraded,
        "accuracy": 100.0 * correct / n if n else 0.0,
        "accuracy_graded": 100.0 * correct / graded if graded else 0.0,
    }
