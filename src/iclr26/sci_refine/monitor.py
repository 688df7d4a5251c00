"""Monitor-based implicit retrieval (Eigen-1, arXiv 2509.21193, Sec. 3.1): the Monitor, Querier and Injector.

While the main model streams one reasoning step, a Monitor call looks at the latest window of text
and says whether it needs a looked-up fact. On yes, a Querier call writes one search query, the
`search` callable retrieves (already filtered) passages, an Injector call writes a short
continuation that brings them into the reasoning in the model's own voice, the main stream is
stopped (`TextStream.close()`) and generation resumes from the augmented prefix
(`stream(..., prefix=text[:cut] + injection)`). At most one injection per step (the authors'
`max_rag = 1`).

**Window rule** (`WindowSchedule`; the authors' 512-character chunk with a 128-character overlap).
Let `end` be the length of the step's generated text after a stream delta arrives, and `last` the
offset of the previous due check. A check is due at the first `end` with `end >= window` (first
check), and afterwards at the first `end` with `end - last >= window - overlap`. The check looks
at `text[max(0, end - window):end]`. With one-character deltas and the defaults the checks fall at
offsets 512, 896, 1280, ... = 512 + 384 k, so consecutive windows share exactly 128 characters;
with longer deltas each check happens at the first delta boundary past its threshold and the next
threshold counts from there. A check that falls inside an open code block (``code_block_open``)
is skipped and still uses up its slot, as in the authors' loop.

**Build-up rows** (`MonitorConfig.mode`, the paper's Table "+Monitor / +Querier / +Injector"):
- `monitor`: on yes, the window itself is the query and the passages are inserted verbatim;
- `querier`: on yes, the Querier writes the query; passages are inserted verbatim;
- `injector`: the full stack, Querier query and an Injector-written continuation.

A *step* is one reasoning call of the main model (one assistant turn, `ImplicitRAG.step`), with its
resumption after an injection.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel, Completion, LLMError, Message, TextStream
from iclr26.core.llm.usage import Usage, UsageMeter, metered
from iclr26.core.validation import check_interval
from iclr26.sci_refine import prompts
from iclr26.sci_refine.question import Passage

MODES = ("monitor", "querier", "injector")
"""the build-up rows: Monitor only, + Querier, + Injector (see the module docstring)"""

ROLES = ("main", "monitor", "querier", "injector")
"""the model roles whose calls and tokens are counted apart"""

Search = Callable[[str], Sequence[Passage]]
"""retrieval: a query in, (filtered) passages out"""


@dataclass(frozen=True)
class MonitorConfig:
    """Settings of the Monitor / Querier / Injector stack; defaults are the paper's."""

    window: int = 512
    """characters the Monitor sees, and the check period of the first check (authors' rag_chunk)"""
    overlap: int = 128
    """characters shared by consecutive windows (authors' rag_overlapping); checks every window - overlap"""
    mode: str = "injector"
    """build-up row: monitor (window as query, raw passages), querier (+ query), injector (+ woven text)"""
    max_injections: int = 1
    """injections allowed per step (paper: one); after it the step streams on unmonitored"""
    max_passages: int = 3
    """passages (after the search callable's filter) shown to the Injector or inserted"""
    passage_chars: int = 400
    """each passage is cut to this many characters before use"""
    monitor_max_tokens: int = 3
    """tokens of the Monitor's yes/no reply"""
    yes_threshold: float = 0.0
    """0: the Monitor's verdict is the word it writes (the paper's); in (0, 1): yes when
    P(yes) / (P(yes) + P(no)) of its first reply token reaches this (a small model that always writes
    "no" still ranks windows; needs a backend with log-probs)"""
    querier_max_tokens: int = 24
    """tokens of the Querier's query"""
    injector_max_tokens: int = 80
    """tokens of the Injector's continuation"""
    query_chars: int = 160
    """a query is cut to this many characters"""

    def __post_init__(self) -> None:
        if not isinstance(self.window, int) or self.window < 1:
            raise ConfigError(f"window must be a positive int, got {self.window!r}")
        if not isinstance(self.overlap, int) or not 0 <= self.overlap < self.window:
            raise ConfigError(
                f"overlap must be an int in 0..window-1 (window={self.window}), got {self.overlap!r}"
            )
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        check_interval("yes_threshold", self.yes_threshold, 0, 1, closed=(True, False))
        for name in ("max_injections",):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ConfigError(f"{name} must be an int >= 0, got {getattr(self, name)!r}")
        for name in (
            "max_passages",
            "passage_chars",
            "monitor_max_tokens",
            "querier_max_tokens",
            "injector_max_tokens",
            "query_chars",
        ):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} must be a positive int, got {getattr(self, name)!r}")


class WindowSchedule:
    """When the Monitor looks, and what it sees (the rule in the module docstring)."""

    def __init__(self, window: int = 512, overlap: int = 128) -> None:
        if window < 1 or not 0 <= overlap < window:
            raise ConfigError(
                f"need window >= 1 and 0 <= overlap < window, got window={window}, overlap={overlap}"
            )
        self.window = window
        self.overlap = overlap
        self.stride = window - overlap
        self.last: int | None = None  # offset of the previous due check

    def due(self, end: int) -> bool:
        """Whether a check is due with `end` characters generated (does not record it)."""
        if self.last is None:
            return end >= self.window
        return end - self.last >= self.stride

    def mark(self, end: int) -> None:
        """Record a due check at `end` (checked or suppressed: either uses the slot)."""
        self.last = end

    def restart(self, end: int) -> None:
        """Count the next threshold from `end` (after an injection, from the augmented text's end)."""
        self.last = end

    def window_of(self, text: str, end: int | None = None) -> str:
        """The characters a check at `end` (default: the text's end) looks at."""
        end = len(text) if end is None else end
        return text[max(0, end - self.window) : end]


def check_offsets(ends: Sequence[int], window: int = 512, overlap: int = 128) -> list[int]:
    """The offsets among `ends` (text lengths after each delta, increasing) at which checks are due."""
    schedule = WindowSchedule(window, overlap)
    out = []
    for end in ends:
        if schedule.due(end):
            schedule.mark(end)
            out.append(end)
    return out


def code_block_open(text: str) -> bool:
    """Whether `text` ends inside a code block: an odd number of ``` fences, or a <code> tag after the
    last </code> (the authors skip the Monitor inside <code> blocks, which is where their tool calls are)."""
    if text.count("```") % 2 == 1:
        return True
    return text.rfind("<code") > text.rfind("</code>")


def join_injection(prefix: str, injection: str, *, min_echo: int = 12) -> str:
    """`prefix` with `injection` appended so they read as one text.

    - An injection that starts by repeating the end of the prefix (an echo of at least `min_echo`
      characters, e.g. a model restating the window) loses the repeated part.
    - Whitespace at the seam: none doubled. A prefix ending in whitespace takes the injection with its
      leading whitespace removed; otherwise the injection's leading whitespace becomes one newline
      (if it held one) or one space; an injection starting with a word gets one space, one starting
      with punctuation (.,;:!?) none.
    - Trailing spaces and tabs are dropped (a trailing newline stays), so the resumed generation
      starts cleanly.
    The prefix itself is never changed: the cut stays at the check offset.
    """
    body = _drop_echo(prefix, injection, min_echo)
    if not body.strip():
        return prefix
    stripped = body.lstrip()
    lead = body[: len(body) - len(stripped)]
    if not prefix or prefix[-1].isspace():
        sep = ""
    elif lead:
        sep = "\n" if "\n" in lead else " "
    elif stripped[0] in ".,;:!?)":
        sep = ""
    else:
        sep = " "
    return prefix + sep + stripped.rstrip(" \t")


def _drop_echo(prefix: str, injection: str, min_echo: int) -> str:
    """`injection` without a leading repeat of the prefix's last characters (longest first)."""
    lead = injection[: len(injection) - len(injection.lstrip())]
    rest = injection.lstrip()
    tail = prefix.rstrip()
    for k in range(min(len(tail), len(rest)), min_echo - 1, -1):
        if tail.endswith(rest[:k]):
            return lead + rest[k:]
    return injection


def parse_yes_no(text: str) -> bool | None:
    """The Monitor's verdict: the first yes/no word of `text` (case-insensitive); None if there is none."""
    for word in re.findall(r"[A-Za-z]+", text)[:6]:
        w = word.lower()
        if w in ("yes", "y", "true"):
            return True
        if w in ("no", "n", "false"):
            return False
    return None


def yes_probability(top: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over a token's top alternatives (yes/no in any case and spacing);
    None when neither word is among them."""
    p = {"yes": 0.0, "no": 0.0}
    for token, logprob in top:
        word = token.strip().lower()
        if word in p:
            p[word] += math.exp(logprob)
    total = p["yes"] + p["no"]
    return p["yes"] / total if total > 0 else None


def parse_query(text: str, max_chars: int = 160) -> str:
    """The Querier's query: its first non-empty line without labels, quotes or trailing punctuation."""
    for line in text.splitlines():
        q = re.sub(r"^\s*(?:search\s+)?query\s*:\s*", "", line.strip(), flags=re.IGNORECASE)
        q = q.strip(" \t\"'`*.?!;,")
        if q:
            return q[:max_chars].strip()
    return ""


def format_passages(passages: Sequence[Passage], max_chars: int = 400) -> str:
    """Passages numbered one per line, each cut to `max_chars` characters."""
    return "\n".join(
        prompts.PASSAGE_LINE.format(n=i, text=_clip(p.text, max_chars)) for i, p in enumerate(passages, 1)
    )


def _clip(text: str, max_chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 3].rstrip() + "..."


def _clean_injection(text: str) -> str:
    """The Injector's output kept to its complete sentences, on one paragraph, with no code fences."""
    text = text.replace("```", "").replace("<code>", "").replace("</code>", "")
    text = text.split("\n\n")[0].rstrip()
    cut = max(text.rfind(". "), text.rfind(".\n"))
    if text and text[-1] not in ".!?" and cut > 0:
        text = text[: cut + 1]
    return text


@dataclass(frozen=True)
class MonitorCall:
    """One Monitor check."""

    offset: int
    """the step-text offset of the check (the cut point if it led to an injection)"""
    verdict: bool | None
    """yes / no; None when the reply had neither (counted as no)"""
    reply: str
    """the Monitor's raw reply"""
    p_yes: float | None = None
    """P(yes) / (P(yes) + P(no)) of the first reply token, when the verdict was read from log-probs"""


@dataclass(frozen=True)
class Injection:
    """One retrieval brought into the reasoning."""

    offset: int
    """the step-text offset where the main stream was cut (the check offset)"""
    query: str
    """what was searched for"""
    passage_ids: tuple[str, ...]
    """ids of the passages used, in order"""
    text: str
    """exactly what was inserted after text[:offset]"""
    mode: str
    """the build-up row that made it (MODES)"""
    fallback: str = ""
    """non-empty when a stage failed and a simpler one stood in (e.g. 'injector failed: raw passages')"""


@dataclass
class RoleUsage:
    """Calls and tokens of one role, from the model's `usage` meter deltas."""

    calls: int = 0
    """LLM calls made in this role"""
    usage: Usage = field(default_factory=Usage)
    """meter delta summed over those calls"""

    def add(self, delta: Usage, calls: int = 1) -> None:
        """Count `calls` more calls costing `delta`."""
        self.calls += calls
        self.usage = self.usage + delta


def roles_total(roles: dict[str, RoleUsage]) -> Usage:
    """Tokens and calls summed over every role's tally."""
    return sum((r.usage for r in roles.values()), Usage())


@dataclass
class ImplicitRAGResult:
    """The transcript of one monitored reasoning step."""

    text: str = ""
    """the step's final text: generated text with the injection in place (not the given prefix)"""
    injections: list[Injection] = field(default_factory=list)
    """injections made, in order (at most `max_injections`)"""
    monitor_calls: list[MonitorCall] = field(default_factory=list)
    """every Monitor check, in order"""
    suppressed: list[int] = field(default_factory=list)
    """offsets of due checks skipped because a code block was open"""
    retrieval_calls: int = 0
    """calls of the search callable"""
    empty_retrievals: int = 0
    """searches that returned no passage (no injection followed)"""
    unparsed_monitor: int = 0
    """Monitor replies with neither yes nor no (counted as no)"""
    segments: list[str] = field(default_factory=list)
    """the main model's text per stream: the part before the cut, then the resumed part"""
    roles: dict[str, RoleUsage] = field(default_factory=lambda: {r: RoleUsage() for r in ROLES})
    """calls and tokens per role (main counts one call per stream)"""
    finish_reason: str | None = None
    """the last main stream's finish_reason (stop, length; None if stopped or cut short)"""
    stopped_by: str = ""
    """how the step ended: model, length, stop_when, server_ended, error"""
    error: str = ""
    """a one-line message when the server ended the stream early or a call failed"""
    wall_s: float = 0.0
    """wall time of the step"""

    @property
    def usage(self) -> Usage:
        """Tokens and calls over all roles."""
        return roles_total(self.roles)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over all roles."""
        return self.usage.total_tokens


class _Meter:
    """Adds the usage of the calls made inside `call` (in this thread, `core.llm.usage.metered`) to a
    role's tally: exact even when other threads use the same model object at the same time."""

    def __init__(self, model: ChatModel, tally: RoleUsage) -> None:
        self.meter: UsageMeter = model.usage
        self.tally = tally

    def call(self, fn: Callable[..., object], *args: object, calls: int = 0, **kwargs: object) -> object:
        """`fn(*args, **kwargs)`, the usage it recorded added to the tally as `calls` calls."""
        with metered() as spent:
            try:
                return fn(*args, **kwargs)
            finally:
                self.tally.add(spent.total, calls)


class ImplicitRAG:
    """The Monitor / Querier / Injector stack around a main model's streamed reasoning step.

    `model` is the main (reasoning) model; `monitor_model` (default: `model`) serves the Monitor,
    Querier and Injector roles unless `querier_model` / `injector_model` are given. `search` takes
    one query and returns passages (the retriever with its passage filter).
    """

    def __init__(
        self,
        model: ChatModel,
        search: Search,
        config: MonitorConfig | None = None,
        *,
        monitor_model: ChatModel | None = None,
        querier_model: ChatModel | None = None,
        injector_model: ChatModel | None = None,
    ) -> None:
        if not callable(search):
            raise UserError(f"search must be a callable query -> list[Passage], got {type(search).__name__}")
        self.model = model
        self.search = search
        self.config = config or MonitorConfig()
        self.monitor_model = monitor_model or model
        self.querier_model = querier_model or self.monitor_model
        self.injector_model = injector_model or self.monitor_model

    # ---- the main loop -------------------------------------------------------------------------

    def step(
        self,
        messages: Sequence[Message],
        *,
        prefix: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int | None = None,
        stop_when: Callable[[str], int | None] | None = None,
    ) -> ImplicitRAGResult:
        """Stream one reasoning step of the main model under the Monitor; return its transcript.

        `prefix` is assistant text the step continues (not part of the result's `text`). `stop_when`
        sees the step text after each delta and returns an offset to end the step at (e.g. just after
        a tool call's closing fence), or None; the stream is then closed and the text cut there.
        `max_tokens` bounds the main model's completion tokens over the step (both streams together).
        """
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise UserError(f"max_tokens must be a positive int, got {max_tokens!r}")
        cfg = self.config
        res = ImplicitRAGResult()
        schedule = WindowSchedule(cfg.window, cfg.overlap)
        main = _Meter(self.model, res.roles["main"])
        start = time.perf_counter()
        text = ""  # the step's text so far (after an injection: augmented text + resumed deltas)
        budget = max_tokens
        while True:
            seg_start = len(text)
            full_prefix = (prefix or "") + text
            stream = main.call(
                self.model.stream,
                messages,
                temperature=temperature,
                max_tokens=budget,
                seed=seed,
                prefix=full_prefix or None,
                calls=1,
            )
            assert isinstance(stream, TextStream)
            injected = False
            try:
                for delta in _deltas(stream, main):
                    text += delta
                    if stop_when is not None:
                        cut = stop_when(text)
                        if cut is not None:
                            text = text[:cut]
                            main.call(stream.close)
                            res.stopped_by = "stop_when"
                            break
                    if len(res.injections) >= cfg.max_injections:
                        continue  # paper: at most one injection per step, then no more checks
                    end = len(text)
                    if not schedule.due(end):
                        continue
                    schedule.mark(end)
                    if code_block_open((prefix or "") + text):
                        res.suppressed.append(end)  # no retrieval inside a code block
                        continue
                    augmented = self._check(text, end, schedule.window_of(text, end), res)
                    if augmented is not None:
                        main.call(stream.close)  # stop the main stream at the check point
                        res.segments.append(text[seg_start:])
                        text = augmented
                        schedule.restart(len(text))
                        injected = True
                        break
            except LLMError as e:
                main.call(stream.close)
                res.segments.append(text[seg_start:])
                res.stopped_by, res.error = "error", f"main stream failed at offset {len(text)}: {e}"
                break
            except BaseException:
                main.call(stream.close)  # a bug or an interrupt: stop the server's generation first
                raise
            if not injected:
                res.segments.append(text[seg_start:])
            budget -= stream.completion_tokens
            if injected and budget >= 1:
                continue  # resume from the augmented prefix
            if res.stopped_by != "stop_when":
                res.finish_reason = stream.finish_reason
                res.stopped_by = _ending(stream, injected)
                if res.stopped_by == "server_ended":
                    res.error = (
                        f"the server ended the main stream early at offset {len(text)} (no finish reason)"
                    )
            break
        res.text = text
        res.wall_s = time.perf_counter() - start
        return res

    # ---- one check: Monitor -> Querier -> search -> Injector -------------------------------------

    def _check(self, text: str, end: int, window: str, res: ImplicitRAGResult) -> str | None:
        """Run the stack at offset `end`; the augmented text `text[:end] + injection`, or None."""
        cfg = self.config
        verdict, reply, p_yes = self.ask_monitor(window, res)
        res.monitor_calls.append(MonitorCall(end, verdict, reply, p_yes))
        if verdict is None:
            res.unparsed_monitor += 1
        if not verdict:
            return None
        fallback = ""
        if cfg.mode == "monitor":
            query = " ".join(window.split())  # Monitor-only row: the window is the query
        else:
            query = self.ask_querier(window, res)
            if not query:
                query, fallback = " ".join(window.split()), "querier gave no query: window used"
        passages = self._retrieve(query, res)
        if not passages:
            return None
        head = text[:end]
        if cfg.mode == "injector":
            inserted, failed = self.ask_injector(head, window, query, passages, res)
            if failed:
                fallback = (fallback + "; " if fallback else "") + failed
        else:
            inserted = "\n" + format_passages(passages, cfg.passage_chars) + "\n"
        augmented = join_injection(head, inserted)
        res.injections.append(
            Injection(end, query, tuple(p.id for p in passages), augmented[len(head) :], cfg.mode, fallback)
        )
        return augmented

    def ask_monitor(self, window: str, res: ImplicitRAGResult) -> tuple[bool | None, str, float | None]:
        """The Monitor's verdict on `window`, its raw reply, and P(yes) when `yes_threshold` > 0 (the
        verdict is then P(yes) >= yes_threshold); a failed call counts as no."""
        cfg = self.config
        msgs: list[Message] = [
            {"role": "system", "content": prompts.MONITOR_SYSTEM},
            {"role": "user", "content": prompts.MONITOR_USER.format(window=window)},
        ]
        if cfg.yes_threshold <= 0:
            out = self._chat(
                "monitor", self.monitor_model, msgs, prompts.MONITOR_PREFIX, cfg.monitor_max_tokens, res
            )
            return (parse_yes_no(out.text) if out is not None else None), out.text if out else "", None
        if not self.monitor_model.supports_logprobs:
            raise UserError(
                f"monitor.yes_threshold={cfg.yes_threshold} reads log-probs, which {self.monitor_model.name} "
                "does not give; set monitor.yes_threshold=0"
            )
        out = self._chat(
            "monitor",
            self.monitor_model,
            msgs,
            prompts.MONITOR_PREFIX,
            1,
            res,
            top_logprobs=10,
        )
        p_yes = yes_probability(out.logprobs[0].top) if out is not None and out.logprobs else None
        verdict = None if p_yes is None else p_yes >= cfg.yes_threshold
        return verdict, out.text if out else "", p_yes

    def ask_querier(self, window: str, res: ImplicitRAGResult) -> str:
        """The Querier's one search query for `window` ('' when it wrote none)."""
        msgs: list[Message] = [
            {"role": "system", "content": prompts.QUERIER_SYSTEM},
            {"role": "user", "content": prompts.QUERIER_USER.format(window=window)},
        ]
        out = self._chat(
            "querier", self.querier_model, msgs, prompts.QUERIER_PREFIX, self.config.querier_max_tokens, res
        )
        return parse_query(out.text if out else "", self.config.query_chars)

    def ask_injector(
        self, head: str, window: str, query: str, passages: Sequence[Passage], res: ImplicitRAGResult
    ) -> tuple[str, str]:
        """The injection (lead-in, the Injector's sentences, a resume cue) and a failure note ('' if none).

        The Injector is prefilled with the window and the lead-in, so its reply continues them."""
        cfg = self.config
        lead = prompts.INJECTOR_LEAD_IN.format(query=query)
        seam = join_injection(window, lead)  # what the Injector sees as its own text so far
        msgs: list[Message] = [
            {"role": "system", "content": prompts.INJECTOR_SYSTEM},
            {
                "role": "user",
                "content": prompts.INJECTOR_USER.format(
                    query=query, passages=format_passages(passages, cfg.passage_chars), window=window
                ),
            },
        ]
        out = self._chat(
            "injector", self.injector_model, msgs, seam, cfg.injector_max_tokens, res, stop=["\n\n"]
        )
        body, failed = _clean_injection(out.text if out else ""), ""
        if not body.strip():
            # the Injector wrote nothing usable: state the first passage itself after the lead-in
            body, failed = (
                _clip(passages[0].text, cfg.passage_chars),
                "injector gave no text: first passage used",
            )
        if not body[0].isspace() and body[0] not in ".,;:!?":
            body = " " + body  # a backend that drops the continuation's leading space
        sentence = (lead + body).rstrip()
        if sentence[-1] not in ".!?":
            sentence += "."
        return sentence + prompts.INJECTOR_RESUME, failed

    def _retrieve(self, query: str, res: ImplicitRAGResult) -> list[Passage]:
        """The search callable's passages for `query`, at most `max_passages` (errors: none)."""
        res.retrieval_calls += 1
        try:
            got = list(self.search(query))
        except (LLMError, UserError) as e:
            res.error = f"search failed for {query[:60]!r}: {e}"
            got = []
        bad = [p for p in got if not isinstance(p, Passage)]
        if bad:
            raise UserError(f"search must return Passage records, got {type(bad[0]).__name__}")
        if not got:
            res.empty_retrievals += 1
        return got[: self.config.max_passages]

    def _chat(
        self,
        role: str,
        model: ChatModel,
        msgs: list[Message],
        prefix: str,
        max_tokens: int,
        res: ImplicitRAGResult,
        stop: Sequence[str] | None = None,
        top_logprobs: int = 0,
    ) -> Completion | None:
        """One greedy helper call in `role` (with `top_logprobs` alternatives per token when > 0); its
        completion, or None when the call failed (recorded)."""
        meter = _Meter(model, res.roles[role])
        # log-prob fields only when asked for: they are part of the cache key of every other call too
        extra = {"logprobs": True, "top_logprobs": top_logprobs} if top_logprobs else {}
        try:
            out = meter.call(
                model.chat,
                msgs,
                max_tokens=max_tokens,
                temperature=0.0,
                prefix=prefix,
                stop=stop,
                calls=1,
                **extra,
            )
        except LLMError as e:
            res.error = f"{role} call failed: {e}"
            return None
        assert isinstance(out, list)
        return out[0] if out else Completion("")


def _deltas(stream: TextStream, meter: _Meter) -> Iterator[str]:
    """The stream's deltas, with the usage it records (when it ends) added to the main role."""
    it = iter(stream)
    while True:
        with metered() as spent:
            try:
                delta = next(it)
            except StopIteration:
                return
            finally:
                meter.tally.add(spent.total, 0)
        yield delta


def _ending(stream: TextStream, injected: bool) -> str:
    """How a main stream ended: model (stop), length, or server_ended (no finish reason)."""
    if stream.finish_reason == "length" or (injected and not stream.finish_reason):
        return "length"  # out of tokens, or no budget left to resume after an injection
    if stream.finish_reason:
        return "model"
    return "server_ended"
