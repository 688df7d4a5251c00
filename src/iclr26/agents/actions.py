"""Action parsers: turn a model's reply into an `Action`, or a `ParseError` the agent is shown.

Three formats, as the agent benchmarks use them:
- a fenced code block (```bash ... ```): a shell command (Terminal-Bench, DevOps-Gym) or
  pyautogui code (ScienceBoard);
- a JSON object checked against a JSON schema (tool calls, structured answers);
- control words on a line of their own: `DONE`, `FAIL`, `WAIT`, and `ANSWER: <text>` (ScienceBoard's
  `ANS <text>` too).
A parse failure is never a crash: the step loop sends `ParseError`'s message back to the agent
as its next observation. Model output is only ever parsed here, never evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iclr26.core.errors import UserError
from iclr26.core.jsontext import balanced_spans

ActionKind = Literal["code", "json", "done", "fail", "wait", "answer"]
CONTROLS = ("DONE", "FAIL", "WAIT", "ANSWER")

_LANGUAGE = re.compile(r"[ \t]*([\w+-]*)")
_CONTROL = re.compile(r"^[ \t>*_`#]*(DONE|FAIL|WAIT|ANSWER|ANS)\b[ \t]*:?[ \t]*(.*?)[ \t*_`]*$", re.MULTILINE)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Each ```lang ... ``` block as (lang, body), left to right, in time linear in `text`.

    The opening fence's line is ``` then an optional language word; the body runs to the next ```.
    Found by `str.find`, not a lazy regex, so a reply of many backticks and no newline costs no more
    than its length (a regex retried at each backtick was quadratic)."""
    blocks, pos = [], 0
    while (start := text.find("```", pos)) >= 0:
        eol = text.find("\n", start + 3)
        close = text.find("```", eol + 1) if eol >= 0 else -1
        if close < 0:
            break  # a later opening has no newline or no close after it either
        language = _LANGUAGE.match(text, start + 3, eol)
        blocks.append((language.group(1) if language else "", text[eol + 1 : close]))
        pos = close + 3
    return blocks


class ParseError(ValueError):
    """A reply that holds no valid action; the message tells the agent what was expected."""


class InvalidAction(UserError):
    """An environment cannot carry out a well-formed action (e.g. a click off the screen); the
    step loop shows the message to the agent instead of stopping."""


@dataclass(frozen=True)
class Action:
    """One parsed action: `kind`, its `content` (code, a JSON value or an answer), and the code's language."""

    kind: ActionKind
    content: Any = None
    language: str | None = None

    @property
    def word(self) -> str:
        """The control word of a control action (DONE, FAIL, WAIT, ANSWER), else ''."""
        return {"done": "DONE", "fail": "FAIL", "wait": "WAIT", "answer": "ANSWER"}.get(self.kind, "")

    @property
    def terminal(self) -> bool:
        """Whether the action ends the episode (DONE, FAIL or an answer)."""
        return self.kind in ("done", "fail", "answer")


def parse_code_block(text: str, languages: Sequence[str] | None = ("bash", "sh", "shell", "")) -> Action:
    """The first fenced code block whose language is in `languages` (None: any language)."""
    fence = f"```{(languages or ('bash',))[0] or 'bash'} ... ```"  # the block the error messages ask for
    blocks = [(lang.lower(), body) for lang, body in fenced_blocks(text)]
    for lang, body in blocks:
        if languages is None or lang in languages:
            if not body.strip():
                raise ParseError(f"the code block is empty: put the code inside {fence}")
            return Action("code", body.rstrip("\n"), lang or None)
    if blocks:
        got = ", ".join(sorted({lang or "(none)" for lang, _ in blocks}))
        want = ", ".join(x or "(none)" for x in languages or ())
        raise ParseError(f"found code blocks in {got}, but the action must be a block in: {want}")
    raise ParseError(f"no fenced code block found: reply with the code inside {fence}")


def _json_candidates(text: str) -> list[str]:
    """Fenced ```json blocks first, then each balanced {...} span in the text."""
    fenced = [body for lang, body in fenced_blocks(text) if lang.lower() in ("json", "")]
    return fenced + balanced_spans(text)


def parse_json_action(text: str, schema: Mapping[str, Any] | None = None) -> Action:
    """The first JSON value in `text` (a ```json block or a {...} span) that satisfies `schema`."""
    import jsonschema

    candidates = _json_candidates(text)
    if not candidates:
        raise ParseError("no JSON object found: reply with one JSON object, e.g. inside ```json ... ```")
    problem = ""
    for c in candidates:
        try:
            value = json.loads(c)
        except json.JSONDecodeError as e:
            problem = problem or f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno})"
            continue
        if schema is not None:
            errors = sorted(
                jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path)
            )
            if errors:
                where = "/".join(str(p) for p in errors[0].path) or "(top level)"
                problem = f"the JSON does not match the schema at {where}: {errors[0].message}"
                continue
        return Action("json", value, "json")
    raise ParseError(problem)


def parse_control(text: str) -> Action | None:
    """`DONE`, `FAIL`, `WAIT` or `ANSWER: text` (or `ANS text`) on a line of its own, else None.

    The last such line wins, so a reply that reasons first and decides at the end is read right.
    """
    found = list(_CONTROL.finditer(text))
    if not found:
        return None
    word, rest = found[-1].group(1), found[-1].group(2).strip()
    if word in ("ANSWER", "ANS"):
        if not rest:
            raise ParseError("ANSWER needs the answer on the same line: `ANSWER: <your answer>`")
        return Action("answer", rest, None)
    if rest:
        return None  # "DONE with the first part" is prose, not the control word
    return Action(word.lower(), None, None)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ActionParser:
    """Parses replies in the formats a task accepts: control words, code blocks, JSON.

    Control words are read first (a reply that says DONE is done, whatever code it quotes), then a
    code block in `code_languages`, then a JSON object against `json_schema`.
    """

    code_languages: tuple[str, ...] | None = ("bash", "sh", "shell", "")
    json_schema: Mapping[str, Any] | None = None
    controls: tuple[str, ...] = CONTROLS
    accept_code: bool = True
    accept_json: bool = False

    def __post_init__(self) -> None:
        unknown = [c for c in self.controls if c not in CONTROLS]
        if unknown:
            raise UserError(f"ActionParser.controls: unknown {unknown}; allowed: {', '.join(CONTROLS)}")
        if not (self.accept_code or self.accept_json or self.controls):
            raise UserError("ActionParser accepts nothing: enable accept_code, accept_json or some controls")
        if self.json_schema is not None and not self.accept_json:
            raise UserError("ActionParser.json_schema is set but accept_json is False; set accept_json=True")

    def formats(self) -> str:
        """A one-line description of what the parser accepts (shown to the agent on a failure)."""
        parts = []
        if self.accept_code:
            lang = (self.code_languages or ("bash",))[0] or "bash"
            parts.append(f"a ```{lang} code block")
        if self.accept_json:
            parts.append("a JSON object" + (" matching the schema" if self.json_schema else ""))
        words = [("ANSWER: <answer>" if c == "ANSWER" else c) for c in self.controls]
        if words:
            parts.append("or one of " + ", ".join(words) + " on its own line")
        return "Reply with " + ", ".join(parts) + "."

    def parse(self, text: str) -> Action:
        """The action in `text`; raises `ParseError` naming what is wrong and what is accepted."""
        if not isinstance(text, str) or not text.strip():
            raise ParseError(f"the reply is empty. {self.formats()}")
        errors = []
        try:
            control = parse_control(text) if self.controls else None
        except ParseError as e:
            control, errors = None, [str(e)]
        if (
            control is not None
            and ("ANSWER" if control.kind == "answer" else control.kind.upper()) in self.controls
        ):
            return control
        if self.accept_code:
            try:
                return parse_code_block(text, self.code_languages)
            except ParseError as e:
                errors.append(str(e))
        if self.accept_json:
            try:
                return parse_json_action(text, self.json_schema)
            except ParseError as e:
                errors.append(str(e))
        raise ParseError("; ".join(errors) + f". {self.formats()}" if errors else self.formats())
