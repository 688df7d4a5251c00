"""GLoW's prompts and the parsers of their replies (our own wording; arXiv 2509.24116, Sec. 3).

The model calls of the paper, one template each:
- `POLICY_PROMPT`: Agent_LLM(s_t, h_t, W_local, T_s, F) -> one action;
- `GLOBAL_PROMPT`: g_LLM(F) -> W_global = {(s, v, v')}, critical states with the value reached
  and an estimated potential v' (a "semantic UCB");
- `ALIGN_PROMPT`: align_LLM(W_global, A) -> a score per archived state; the select step restores
  the argmax;
- `REFLECT_PROMPT`: f_LLM(T_s, F) -> W_local, multi-path advantage reflection (MAR) over the
  rollouts from one start, with frontier trajectories as the baseline;
and the two LLM baselines: `REACT_PROMPT` (think, then act) and `REFLEXION_PROMPT` (a reflection
between episodes, shown to the next ones in `REFLEXION_SECTION`).

Every parser returns a `ParseResult`: a value, or an error message written to be shown to the
model as its next observation (a reply with no action never steps the game). Parsers are lenient
with small models: `Action:` may be bold, quoted or bulleted, JSON may use single quotes, and a
lone short line counts as a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from iclr26.core.jsontext import json_objects

T = TypeVar("T")

SYSTEM_PROMPT = """You are a careful, curious player of interactive fiction (text adventure games). \
You explore, pick up useful objects, solve puzzles and try to raise the game's score."""
"""The system message of every call."""

POLICY_PROMPT = """{memory}Score so far: {score}

Your recent moves, oldest first:
{history}

Where you are now:
{observation}

Commands the game understands here: {valid_actions}

Choose the single command most likely to raise the score or reach somewhere new. \
Reply with one line only:
Action: <command>"""
"""Agent_LLM(s_t, h_t, W_local, T_s, F): the policy's user message. `{memory}` holds the sections
below that the configuration enables (frontier, rollouts from this start, lessons), or nothing."""

FRONTIER_SECTION = """The best play found so far (ranked by the highest score reached):
{frontier}

"""
"""The frontier F inside `POLICY_PROMPT` and `REFLECT_PROMPT`."""

ROLLOUTS_SECTION = """Earlier attempts from this same starting point:
{rollouts}

"""
"""T_s, the rollouts already played from the restored state, inside `POLICY_PROMPT`."""

LESSONS_SECTION = """Lessons from those attempts (state: why it matters):
{lessons}

"""
"""W_local, the last reflection's critical states and advantages, inside `POLICY_PROMPT`."""

GLOBAL_PROMPT = """The best playthroughs of a text game so far, each with the highest score it reached:
{frontier}

Name up to {n} critical moments in these playthroughs: places where the score rose, or where \
play could go further than it did. For each give the score reached there (value) and your \
estimate of the score that could still be reached by continuing from it (potential). \
Write one JSON object per line and nothing else, like:
{{"state": "in the cellar with the lamp lit", "value": 10, "potential": 25}}"""
"""g_LLM(F) -> W_global: critical states with their value v and potential v', as JSON lines."""

GLOBAL_FROM_ARCHIVE_PROMPT = """Here are states reached so far in a text game, each with its score:
{states}

Name up to {n} of them worth exploring further. For each give the score reached there (value) \
and your estimate of the score that could still be reached by continuing from it (potential). \
Write one JSON object per line and nothing else, like:
{{"state": "in the cellar with the lamp lit", "value": 10, "potential": 25}}"""
"""g_LLM without the frontier (the "without F" ablation): W_global from archived states alone."""

ALIGN_PROMPT = """Promising moments of a text game, with the score reached and the score still possible:
{global_memory}

Candidate states to restart from:
{candidates}

Rate how well each candidate matches a promising moment and how much it could still gain, \
from 0 (useless) to 10 (best place to continue). Write one line per candidate, like:
1: 7"""
"""align_LLM(W_global, A): a score per archived candidate; the select step restores the argmax."""

REFLECT_PROMPT = """{frontier}Attempts made from the same starting point:
{rollouts}

Compare these attempts with each other and with the best play above. Name 2 to 4 critical \
states: moments where one attempt gained (or lost) score, opened a new area, or wasted moves. \
For each, say what the better choice there was and why (its advantage). \
Write one JSON object per line and nothing else, like:
{{"state": "at the locked door holding the key", "advantage": "unlock the door first: +5"}}"""
"""f_LLM(T_s, F) -> W_local: multi-path advantage reflection over the rollouts from one start."""

REACT_PROMPT = """{memory}Score so far: {score}

Your recent moves, oldest first:
{history}

Where you are now:
{observation}

Commands the game understands here: {valid_actions}

First think in one or two sentences about what to do, then give one command. Reply as:
Thought: <your reasoning>
Action: <command>"""
"""ReAct: reason, then act. `{memory}` holds Reflexion's reflections, or nothing for plain ReAct."""

REFLEXION_SECTION = """Notes you wrote after earlier attempts at this game:
{reflections}

"""
"""Reflexion's past reflections inside `REACT_PROMPT`."""

REFLEXION_PROMPT = """You just played an attempt at a text game. It went like this:
{episode}

It ended with score {score} (best so far: {best}). In two or three sentences, say what went \
wrong or was wasted, and give a concrete plan for the next attempt (which places, objects and \
commands to try). Reply with the plan only."""
"""Reflexion's between-episode reflection; the reply conditions the following episodes."""

NO_ACTION = (
    "No command found in your reply. Answer with one game command on its own line, as: Action: <command>"
)
"""The observation fed back when a policy reply holds no action (the game is not stepped)."""


@dataclass(frozen=True)
class ParseResult(Generic[T]):
    """A parsed reply: `value`, or `error`, a message to show the model."""

    value: T | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the reply parsed."""
        return self.error is None


@dataclass(frozen=True)
class CriticalState:
    """An entry of W_global: a state described in words, its value v and estimated potential v'."""

    state: str
    value: float
    potential: float


@dataclass(frozen=True)
class Insight:
    """An entry of W_local: a critical state and the text advantage of the better choice there."""

    state: str
    advantage: str


MAX_REPLY = 8000
"""Characters of a reply the parsers read; the rest is dropped (replies are a few hundred tokens)."""

# The patterns below read model text. Their runs are possessive (`*+`): each is followed by a
# character it cannot match, so this changes no match, and a run of blanks costs linear time,
# not the cubic time of backtracking into it (tests/glow/test_reply_patterns.py).
_ACTION = re.compile(
    r"^[\s>*_#`\-]*+(?:next\s+)?(?:action|command)\s*+(?:\d++\s*+)?[*_]*+\s*+[:=]\s*(.*)$", re.I | re.M
)
_WRAP = " \t\"'`*_.!<>[]"
_PROSE = re.compile(r"\b(i|you|we|should|would|think|because|let's|maybe|the player)\b", re.I)


def clean_command(text: str) -> str:
    """A command without quotes, markdown, brackets, a trailing full stop or extra spaces."""
    text = text.strip().splitlines()[0] if text.strip() else ""
    text = text.strip(_WRAP)
    return " ".join(text.split()).lower()


def parse_action(reply: str) -> ParseResult[str]:
    """The command of a policy or ReAct reply: the first `Action: ...` line, else a lone short line."""
    reply = reply[:MAX_REPLY]
    m = _ACTION.search(reply)
    if m:
        cmd = clean_command(m.group(1))
        if not cmd:
            return ParseResult(error="Your 'Action:' line is empty. " + NO_ACTION)
        return ParseResult(cmd) if _is_command(cmd) else ParseResult(error=NO_ACTION)
    lines = [ln for ln in reply.strip().splitlines() if ln.strip()]
    if len(lines) == 1:
        cmd = clean_command(lines[0])
        if cmd and _is_command(cmd):
            return ParseResult(cmd)
    return ParseResult(error=NO_ACTION)


def _is_command(cmd: str) -> bool:
    """A game command, not prose: at most 6 words, no question, none of the reasoning words."""
    return len(cmd.split()) <= 6 and not _PROSE.search(cmd) and not cmd.endswith("?")


def _objects(reply: str) -> list[dict[str, Any]]:
    """Every balanced `{...}` span that parses as a JSON object (single quotes tolerated)."""
    return json_objects(reply, single_quotes=True)


def _number(x: Any) -> float | None:
    """A float from a JSON number or a string holding one (`"10"`, `"about 25 points"`)."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x)
    m = re.search(r"-?\d+(?:\.\d+)?", str(x)) if x is not None else None
    return float(m.group()) if m else None


def parse_global(reply: str, n: int = 5) -> ParseResult[list[CriticalState]]:
    """W_global from g_LLM's JSON lines; `potential` defaults to `value` when missing."""
    out = []
    for obj in _objects(reply[:MAX_REPLY]):
        state = str(obj.get("state") or obj.get("description") or "").strip()
        value = _number(obj.get("value", obj.get("score")))
        if not state:
            continue
        value = 0.0 if value is None else value
        potential = _number(obj.get("potential"))
        out.append(CriticalState(state, value, value if potential is None else potential))
    if not out:
        return ParseResult(
            error='no critical states found: expected JSON lines {"state", "value", "potential"}'
        )
    return ParseResult(out[:n])


_SCORE_LINE = re.compile(
    r"^[\s>*_#\-]*+(?:candidate|state|option|#)?\s*+(\d++)\s*+[*_]*+\s*+[:=)\-.]\s*+[*_]*+\s*+(-?\d+(?:\.\d+)?)",
    re.I | re.M,
)


def parse_scores(reply: str, n: int) -> ParseResult[list[float]]:
    """align_LLM's `i: score` lines as one score per candidate 1..n (unrated candidates get 0)."""
    scores: list[float | None] = [None] * n
    for m in _SCORE_LINE.finditer(reply[:MAX_REPLY]):
        i = int(m.group(1)) - 1
        if 0 <= i < n and scores[i] is None:
            scores[i] = float(m.group(2))
    if all(s is None for s in scores):
        return ParseResult(error=f"no candidate scores found: expected lines 'i: score' for i in 1..{n}")
    return ParseResult([0.0 if s is None else s for s in scores])


_SEPARATORS = ("->", "=>", ":", "—")  # tried in this order where the blanks after the state end; " - " last


def _insight_lines(text: str) -> list[tuple[str, str]]:
    """(state, advantage) of each `state: advantage` line in `text`, in linear time.

    The two groups of each match of `re.finditer` with the pattern
    `^[\\s>*_#\\-\\d.)]*(.{3,}?)\\s*(?:->|=>|:|—| - )\\s*(.{3,})$` (re.M), whose backtracking takes
    cubic time on a run of blanks; each step below is the first choice that pattern's backtracking
    would accept, computed from tables instead of retried.
    """
    n = len(text)
    eol = [n] * (n + 1)  # the end of the line holding each position
    blank_end = [n] * (n + 1)  # the end of the run of whitespace starting at each position
    lead_end = [n] * (n + 1)  # the end of the run of list markers and whitespace starting there
    for i in range(n - 1, -1, -1):
        c = text[i]
        eol[i] = i if c == "\n" else eol[i + 1]
        blank_end[i] = blank_end[i + 1] if c.isspace() else i
        lead_end[i] = lead_end[i + 1] if c.isspace() or c in ">*_#-.)" or c.isdecimal() else i
    tails: dict[int, int | None] = {}

    def tail(d: int) -> int | None:
        """Where the advantage starts after a separator ending at `d` (blanks skipped, >= 3 characters)."""
        if d not in tails:
            tails[d] = next((e for e in range(blank_end[d], d - 1, -1) if eol[e] - e >= 3), None)
        return tails[d]

    def after_state(b: int) -> int | None:
        """Where the advantage starts when the state ends at `b`, or None when no separator follows."""
        c = blank_end[b]
        for sep in _SEPARATORS:
            if text.startswith(sep, c):
                e = tail(c + len(sep))
                if e is not None:
                    return e
        if c > b and text[c - 1] == " " and text.startswith("- ", c):
            return tail(c + 2)
        return None

    advantage = [after_state(b) for b in range(n + 1)]
    next_end = [n + 1] * (n + 2)  # the first state end at or after each position that a separator follows
    for b in range(n, -1, -1):
        next_end[b] = b if advantage[b] is not None else next_end[b + 1]
    last_start = [-1] * (n + 1)  # the last position at or before each one where a state can start
    for a in range(n + 1):
        ok = a + 3 <= n and next_end[a + 3] <= eol[a]
        last_start[a] = a if ok else (last_start[a - 1] if a else -1)
    out = []
    pos = 0
    for s in range(n + 1):
        if s < pos or (s and text[s - 1] != "\n"):
            continue
        a = last_start[lead_end[s]]
        if a < s:
            continue
        b = next_end[a + 3]
        e = advantage[b]
        assert e is not None
        out.append((text[a:b], text[e : eol[e]]))
        pos = eol[e]
    return out


def parse_reflection(reply: str, max_items: int = 4) -> ParseResult[list[Insight]]:
    """W_local from f_LLM's JSON lines (or `state: advantage` lines), at most `max_items`."""
    out = []
    reply = reply[:MAX_REPLY]
    for obj in _objects(reply):
        state = str(obj.get("state") or "").strip()
        adv = str(obj.get("advantage") or obj.get("lesson") or "").strip()
        if state and adv:
            out.append(Insight(state, adv))
    if not out and "{" not in reply:
        out = [
            Insight(state.strip(" *_\"'"), advantage.strip(" *_\"'"))
            for state, advantage in _insight_lines(reply)
        ]
    if not out:
        return ParseResult(error='no critical states found: expected JSON lines {"state", "advantage"}')
    return ParseResult(out[:max_items])


def parse_plan(reply: str, max_chars: int = 600) -> ParseResult[str]:
    """Reflexion's plan: the reply's text, trimmed to `max_chars`."""
    text = " ".join(reply[:MAX_REPLY].split())
    if not text:
        return ParseResult(error="the reflection is empty")
    return ParseResult(text[:max_chars])
