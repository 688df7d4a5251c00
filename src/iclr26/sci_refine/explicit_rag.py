"""Explicit tool-call RAG, the baseline of Eigen-1 (arXiv 2509.21193, Table "+ explicit RAG").

The main model looks facts up itself by writing a fenced search block

    ```search
    molar mass of sodium
    ```

The stream is stopped as soon as the closing fence arrives, the `search` callable is run on the
query, and its passages come back as an observation (a user message); the next assistant turn
continues the reasoning. One assistant turn is one *step*; the loop ends on a turn without a search
block, at `max_steps` (the authors allow 150), or when the server fails. Searches beyond
`max_tool_calls` are answered with a note that the budget is spent. Model output is only parsed as
text: it is never evaluated or executed.

The block is parsed without `eval`: an opening fence "```search" (the word must end there), an
optional query on the same line, then lines up to the next "```". The query is the text in between
with whitespace collapsed and surrounding quotes removed. A block with no query is malformed (the
model is told so); an opening fence with no closing one is not a call.

With `monitor=` an `ImplicitRAG` watches every step's stream as well (explicit and implicit retrieval
together, as in the authors' agent, whose monitor runs beside their <code> tool calls).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel, LLMError, Message
from iclr26.core.llm.usage import Usage
from iclr26.sci_refine import prompts
from iclr26.sci_refine.monitor import (
    ROLES,
    ImplicitRAG,
    ImplicitRAGResult,
    MonitorConfig,
    RoleUsage,
    Search,
    format_passages,
    roles_total,
)
from iclr26.sci_refine.question import Passage

SEARCH_LEAD = "```search\n"
"""the prefill of the first turn under `search_first`: the model writes the query and closes the fence"""

OPEN_FENCE = re.compile(r"```search(?![\w-])")
"""the opening fence of a search block ("```search", not "```searching")"""


@dataclass(frozen=True)
class SearchCall:
    """One search block found in the model's text."""

    query: str
    """the query, whitespace collapsed; empty when malformed"""
    start: int
    """offset of the opening fence"""
    end: int
    """offset just after the closing fence (the step is cut here)"""
    error: str = ""
    """why the block cannot be run ('' when it can)"""


def find_search_call(text: str, max_chars: int = 200) -> SearchCall | None:
    """The first complete search block in `text`, or None (no block, or its fence is not closed yet)."""
    m = OPEN_FENCE.search(text)
    if m is None:
        return None
    close = text.find("```", m.end())
    if close < 0:
        return None
    query = " ".join(text[m.end() : close].split()).strip("\"'` ")
    if not query:
        return SearchCall("", m.start(), close + 3, "the block holds no query")
    if len(query) > max_chars:
        return SearchCall(query[:max_chars], m.start(), close + 3)
    return SearchCall(query, m.start(), close + 3)


def unclosed_search_block(text: str) -> bool:
    """Whether `text` opens a search block that is never closed (malformed, if the turn ended there)."""
    m = OPEN_FENCE.search(text)
    return m is not None and text.find("```", m.end()) < 0


def search_call_end(text: str) -> int | None:
    """`stop_when` for a step: where a complete search block ends, else None."""
    call = find_search_call(text)
    return None if call is None else call.end


@dataclass(frozen=True)
class ExplicitRAGConfig:
    """Settings of the explicit-RAG agent loop."""

    max_steps: int = 150
    """assistant turns allowed (the authors' max_agent_step)"""
    max_tool_calls: int = 20
    """searches run; later search blocks are answered with a note that the budget is spent"""
    max_tokens: int = 512
    """completion tokens per step"""
    max_passages: int = 3
    """passages shown per observation"""
    passage_chars: int = 400
    """each passage is cut to this many characters in an observation"""
    temperature: float = 0.0
    """sampling temperature of the main model"""
    system_prompt: str = prompts.EXPLICIT_SYSTEM
    """system message that explains the search tool (prompts.EXPLICIT_SYSTEM)"""
    search_first: bool = False
    """open the first turn with a search block (the assistant text is prefilled with SEARCH_LEAD, the
    model writes one query line, the block is closed for it): the authors' prompt makes a local search
    the mandatory first action"""

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_tokens", "max_passages", "passage_chars"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} must be a positive int, got {getattr(self, name)!r}")
        if not isinstance(self.max_tool_calls, int) or self.max_tool_calls < 0:
            raise ConfigError(f"max_tool_calls must be an int >= 0, got {self.max_tool_calls!r}")
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0, got {self.temperature}")


@dataclass(frozen=True)
class ToolCall:
    """One search block the model wrote, and what came of it."""

    step: int
    """the step (0-based) whose text ended with the block"""
    query: str
    """the parsed query ('' when malformed)"""
    passage_ids: tuple[str, ...] = ()
    """ids of the passages returned"""
    error: str = ""
    """'' when the search ran; else why not (malformed block, budget spent, search failed)"""


@dataclass
class ExplicitRAGResult:
    """The transcript of one explicit-RAG episode."""

    messages: list[Message] = field(default_factory=list)
    """the whole conversation: system, user, then assistant turns and observations"""
    turns: list[str] = field(default_factory=list)
    """the assistant text of each step"""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """every search block, in order (malformed and refused ones included)"""
    monitored: list[ImplicitRAGResult] = field(default_factory=list)
    """each step's Monitor transcript (only with `monitor=`)"""
    roles: dict[str, RoleUsage] = field(default_factory=lambda: {r: RoleUsage() for r in ROLES})
    """calls and tokens per role (main, monitor, querier, injector)"""
    stopped_by: str = ""
    """answered (a turn with no search block), max_steps, empty, error"""
    error: str = ""
    """a one-line message when a stream failed or ended early"""
    wall_s: float = 0.0
    """wall time of the episode"""

    @property
    def steps(self) -> int:
        """Assistant turns taken."""
        return len(self.turns)

    @property
    def searches(self) -> int:
        """Searches actually run (the retrieval calls)."""
        return sum(1 for c in self.tool_calls if not c.error) + sum(m.retrieval_calls for m in self.monitored)

    @property
    def final_text(self) -> str:
        """The last assistant turn (where the answer is)."""
        return self.turns[-1] if self.turns else ""

    @property
    def usage(self) -> Usage:
        """Tokens and calls over all roles."""
        return roles_total(self.roles)


class ExplicitRAG:
    """The main model with a `search` tool it calls in fenced blocks (optionally also monitored)."""

    def __init__(
        self,
        model: ChatModel,
        search: Search,
        config: ExplicitRAGConfig | None = None,
        *,
        monitor: ImplicitRAG | None = None,
    ) -> None:
        if not callable(search):
            raise UserError(f"search must be a callable query -> list[Passage], got {type(search).__name__}")
        if monitor is not None and monitor.model is not model:
            raise UserError("monitor= must wrap the same main model as the ExplicitRAG agent (monitor.model)")
        self.model = model
        self.search = search
        self.config = config or ExplicitRAGConfig()
        self.monitored = monitor is not None
        # without a monitor each step is a plain stream: a stack that never checks (max_injections=0)
        self.monitor = monitor or ImplicitRAG(model, search, MonitorConfig(max_injections=0))

    def run(self, question: str, *, seed: int | None = None) -> ExplicitRAGResult:
        """Answer `question`, searching when the model asks to; return the transcript."""
        if not isinstance(question, str) or not question.strip():
            raise UserError("question must be a non-empty string")
        cfg = self.config
        res = ExplicitRAGResult(
            messages=[
                {"role": "system", "content": cfg.system_prompt},
                {"role": "user", "content": question},
            ]
        )
        start = time.perf_counter()
        for step in range(cfg.max_steps):
            if step == cfg.max_steps - 1 and step > 0:
                res.messages.append({"role": "user", "content": prompts.FINAL_NUDGE})
                _merge_user(res.messages)
            # the forced first search needs a later step to answer in and a search left to run
            forced = cfg.search_first and step == 0 and cfg.max_steps >= 2 and cfg.max_tool_calls > 0
            got = self.monitor.step(
                res.messages,
                prefix=SEARCH_LEAD if forced else None,
                max_tokens=cfg.max_tokens,
                temperature=cfg.temperature,
                seed=seed,
                stop_when=query_line_end if forced else search_call_end,
            )
            for role, tally in got.roles.items():
                res.roles[role].add(tally.usage, tally.calls)
            if self.monitored:
                res.monitored.append(got)
            # the forced block holds the model's first query line, closed for it however the stream ended
            text = SEARCH_LEAD + forced_query(got.text) + "\n```" if forced else got.text
            res.turns.append(text)
            res.messages.append({"role": "assistant", "content": text})
            if got.stopped_by in ("error", "server_ended"):
                res.stopped_by, res.error = "error", got.error
                break
            call = find_search_call(text)
            if call is None:
                if unclosed_search_block(text):
                    res.tool_calls.append(ToolCall(step, "", (), "the search block was never closed"))
                res.stopped_by = "answered" if text.strip() else "empty"
                break
            if step == cfg.max_steps - 1:
                res.tool_calls.append(ToolCall(step, call.query, (), "step budget spent"))
                continue  # the last step: no observation nobody would read
            res.messages.append({"role": "user", "content": self._observe(step, call, res)})
        else:
            res.stopped_by = "max_steps"
        res.wall_s = time.perf_counter() - start
        return res

    def _observe(self, step: int, call: SearchCall, res: ExplicitRAGResult) -> str:
        """Run one search block and return the observation the model will read."""
        cfg = self.config
        if call.error:
            res.tool_calls.append(ToolCall(step, "", (), call.error))
            return prompts.TOOL_ERROR.format(error=call.error)
        if sum(1 for c in res.tool_calls if not c.error) >= cfg.max_tool_calls:
            res.tool_calls.append(ToolCall(step, call.query, (), "tool-call budget spent"))
            return prompts.TOOL_BUDGET_SPENT
        try:
            passages = list(self.search(call.query))[: cfg.max_passages]
        except (LLMError, UserError) as e:
            res.tool_calls.append(ToolCall(step, call.query, (), f"search failed: {e}"))
            return prompts.OBSERVATION.format(query=call.query, passages=prompts.NO_RESULTS)
        bad = [p for p in passages if not isinstance(p, Passage)]
        if bad:
            raise UserError(f"search must return Passage records, got {type(bad[0]).__name__}")
        res.tool_calls.append(ToolCall(step, call.query, tuple(p.id for p in passages)))
        shown = format_passages(passages, cfg.passage_chars) if passages else prompts.NO_RESULTS
        return prompts.OBSERVATION.format(query=call.query, passages=shown)


def query_line_end(text: str) -> int | None:
    """`stop_when` for the forced first turn (text continuing SEARCH_LEAD): the end of the first line
    with a query on it, or of a closing fence on that line, whichever comes first; None while the
    query line is still being written. Blank lines and a repeated opening fence are skipped."""
    skip = _QUERY_START.match(text).end()  # type: ignore[union-attr]  # the pattern matches ''
    body = text[skip:]
    if not body.strip() or "```search".startswith(body.rstrip()):
        return None  # nothing yet, or a repeated fence still arriving
    ends = [i for i in (body.find("\n"), body.find("```")) if i >= 0]
    if not ends:
        return None
    i = min(ends)
    return skip + i + (3 if body.startswith("```", i) else 0)


def forced_query(text: str) -> str:
    """The query the model wrote in the forced first turn: its first query line, without a closing
    fence ('' when it wrote none, which the parser then reports as a block with no query)."""
    body = text[_QUERY_START.match(text).end() :]  # type: ignore[union-attr]
    return body.split("\n", 1)[0].split("```", 1)[0].strip()


_QUERY_START = re.compile(r"\s*(?:```search[ \t]*\n)?\s*")
"""what precedes the query line in a forced first turn: blank lines, a repeated opening fence"""


def _merge_user(messages: list[Message]) -> None:
    """Fold a trailing pair of user messages into one (chat templates expect alternating turns)."""
    if len(messages) >= 2 and messages[-1]["role"] == messages[-2]["role"] == "user":
        last = messages.pop()
        prev = messages[-1]
        messages[-1] = {"role": "user", "content": f"{prev['content']}\n\n{last['content']}"}
