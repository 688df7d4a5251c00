"""Final answers in free text, for policies that write prose (pretrained chat models).

A pretrained model does not write our `A:<int>` scratchpad; it writes "The answer is 936." or
"347 + 589 = 936". The lenient rule, in order:
1. the last `\\boxed{...}`;
2. else the text after the last "answer" (any case) up to the end of its line: its first number;
3. else the last number anywhere in the text.
Numbers may carry thousands separators ("1,234") and a sign. No number at all: unparsed.

Countdown answers are expressions ("(50 + 25) + 7"), read by the same rule as text instead of a
number (the `\\boxed{}` or the rest of the "answer" line, else the last line that has an operator),
cut at a trailing "= target", and evaluated by our own recursive-descent parser over integers with
+ - * and parentheses. Nothing is passed to `eval`.
"""

from __future__ import annotations

import re
from collections import Counter

_NUMBER = re.compile(r"[-−]?\d{1,3}(?:,\d{3})+(?!\d)|[-−]?\d+")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER_WORD = re.compile(r"answer", re.IGNORECASE)


def _to_int(token: str) -> int:
    return int(token.replace(",", "").replace("−", "-"))


def _answer_span(text: str) -> str | None:
    """The text the answer lies in: the last \\boxed{}, else the rest of the last "answer" line."""
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1]
    marks = list(_ANSWER_WORD.finditer(text))
    if marks:
        return text[marks[-1].end() :].split("\n", 1)[0]
    return None


def final_number(text: str) -> int | None:
    """The final numeric answer of `text` by the lenient rule (module docstring); None if none."""
    span = _answer_span(text)
    if span is not None:
        found = _NUMBER.search(span)
        if found:
            return _to_int(found.group())
    numbers = _NUMBER.findall(text)
    return _to_int(numbers[-1]) if numbers else None


class _Parser:
    """Recursive descent over: expr = term (('+'|'-') term)*; term = atom ('*' atom)*;
    atom = int | '(' expr ')'. Collects the integer literals it reads."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.i, self.literals = tokens, 0, []

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise ValueError("unexpected end of expression")
        self.i += 1
        return token

    def expr(self) -> int:
        value = self.term()
        while self._peek() in ("+", "-"):
            value = value + self.term() if self._take() == "+" else value - self.term()
        return value

    def term(self) -> int:
        value = self.atom()
        while self._peek() == "*":
            self._take()
            value *= self.atom()
        return value

    def atom(self) -> int:
        token = self._take()
        if token == "(":
            value = self.expr()
            if self._take() != ")":
                raise ValueError("unbalanced parentheses")
            return value
        if not token.isdigit():
            raise ValueError(f"expected a number, got {token!r}")
        self.literals.append(int(token))
        return int(token)


def parse_expression(expr: str) -> tuple[int, list[int]]:
    """(value, the integer literals used) of an arithmetic expression over + - * × and
    parentheses; a ValueError names what is malformed."""
    expr = expr.replace("×", "*").replace("−", "-")
    expr = re.sub(r"(?<=[\d)\s])x(?=[\s\d(])", "*", expr)  # "3 x 4" as multiplication
    tokens = re.findall(r"\d+|[+\-*()]|\S", expr)
    if not tokens:
        raise ValueError("empty expression")
    if len(tokens) > 200:
        raise ValueError("expression too long")
    parser = _Parser(tokens)
    value = parser.expr()
    if parser.i != len(tokens):
        raise ValueError(f"unexpected {tokens[parser.i]!r}")
    return value, parser.literals


def final_expression(text: str) -> str | None:
    """The countdown expression of `text`: the answer span (module docstring), else the last line
    with an operator; cut at its last '=' (a trailing "= target") and trimmed."""
    span = _answer_span(text)
    if span is None:
        lines = [line for line in text.split("\n") if re.search(r"\d\s*[+\-*×]\s*\(?\d", line)]
        if not lines:
            return None
        span = lines[-1]
    if "=" in span:
        left, right = span.rsplit("=", 1)
        span = left if re.search(r"[+\-*×]", left) else right  # "82 = 50+25+7" reads either way
    found = re.search(r"[\d(][\d\s+\-*×x()]*", span.lstrip(": *"))
    return found.group().strip() if found else None


def countdown_correct(expr: str, numbers: tuple[int, ...], target: int) -> tuple[bool, bool]:
    """(parsed, correct): `expr` evaluates to `target` using each given number at most once."""
    try:
        value, used = parse_expression(expr)
    except ValueError:
        return False, False
    allowed = Counter(numbers)
    ok = value == target and not (Counter(used) - allowed)
    return True, ok
