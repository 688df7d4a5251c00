"""`Episode`: what an agent saw, did and spent on one task, as JSONL, with an HTML viewer.

One episode is one JSON line in `episodes.jsonl` (`write_episodes` appends atomically per line,
so an interrupted evaluation keeps every finished episode and `read_episodes` resumes from it).
`render_html` writes one self-contained page a person can read: per task, the outcome, the stop
reason, the tokens, and each step's observation, model reply and parsed action.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.jsonfile import append_log, read_log


@dataclass
class ModelCall:
    """One model call of an agent: tokens and wall time (zero for agents that call no model)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    cached: bool = False


@dataclass
class Step:
    """One turn: the observation shown, the agent's reply, the action parsed from it, the outcome."""

    index: int
    observation: str
    reply: str
    action: dict[str, Any] | None  # Action as a dict (kind, content, language); None if unparsed
    parse_error: str | None = None
    model_call: ModelCall = field(default_factory=ModelCall)
    wall_s: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)  # what the environment reports (exit code, ...)
    image: str | None = None  # a screenshot file beside the episodes, for visual observations


@dataclass
class Episode:
    """One agent on one task, from first observation to stop reason and score."""

    task_id: str
    agent: str
    steps: list[Step] = field(default_factory=list)
    stop_reason: str = ""  # done / fail / answer / env_done / max_steps / max_tokens / max_wall_time / error
    success: bool = False
    score: float = 0.0
    answer: str | None = None
    wall_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    final_observation: str = ""

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all steps."""
        return sum(s.model_call.prompt_tokens for s in self.steps)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens over all steps."""
        return sum(s.model_call.completion_tokens for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, with the token totals."""
        d = asdict(self)
        d["prompt_tokens"], d["completion_tokens"] = self.prompt_tokens, self.completion_tokens
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Episode:
        """Rebuild an episode from `to_json` output."""
        d = {k: v for k, v in d.items() if k not in ("prompt_tokens", "completion_tokens")}
        steps = [Step(**{**s, "model_call": ModelCall(**s["model_call"])}) for s in d.pop("steps", [])]
        return cls(steps=steps, **d)


def write_episodes(path: Path | str, episodes: Iterable[Episode], *, append: bool = True) -> Path:
    """Write episodes as JSON lines; appended with `core.jsonfile.append_log` (each line whole and
    fsynced, a torn last line from a crash cut off first), so a crash loses no finished one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not append:
        write_text_atomic(path, "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in episodes))
        return path
    for e in episodes:
        append_log(path, e.to_json())
    return path


def read_episodes(path: Path | str) -> list[Episode]:
    """The episodes in a JSONL file (`core.jsonfile.read_log`: a torn last line from a crash mid-write,
    a cut UTF-8 character included, is dropped and that episode redone)."""
    return [Episode.from_json(d) for d in read_log(path)]


_CSS = """body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;white-space:pre-wrap}
.ok{color:#1a7f37}.bad{color:#cf222e}table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:.2em .6em}
details{margin:.3em 0}summary{cursor:pointer}img{max-width:100%;border:1px solid #ccc}"""


def _pre(text: Any) -> str:
    return f"<pre>{html.escape(str(text))}</pre>"


def render_html(episodes: Sequence[Episode], title: str = "episodes") -> str:
    """One self-contained HTML page showing every episode and step (all text escaped)."""
    rows = "".join(
        f"<tr><td><a href='#ep{i}'>{html.escape(e.task_id)}</a></td><td>{html.escape(e.agent)}</td>"
        f"<td class='{'ok' if e.success else 'bad'}'>{'pass' if e.success else 'fail'}</td>"
        f"<td>{html.escape(e.stop_reason)}</td><td>{len(e.steps)}</td>"
        f"<td>{e.prompt_tokens + e.completion_tokens}</td><td>{e.wall_s:.1f}</td></tr>"
        for i, e in enumerate(episodes)
    )
    parts = [
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_CSS}</style>",
        f"<h1>{html.escape(title)}</h1>",
        "<table><tr><th>task</th><th>agent</th><th>result</th><th>stop</th><th>steps</th>"
        f"<th>tokens</th><th>wall s</th></tr>{rows}</table>",
    ]
    for i, e in enumerate(episodes):
        verdict = f"<span class='{'ok' if e.success else 'bad'}'>{'pass' if e.success else 'fail'}</span>"
        parts.append(
            f"<h2 id='ep{i}'>{html.escape(e.task_id)} · {html.escape(e.agent)} · "
            f"{verdict} ({html.escape(e.stop_reason)})</h2>"
        )
        if e.answer is not None:
            parts.append(f"<p>answer: <code>{html.escape(e.answer)}</code></p>")
        for s in e.steps:
            tokens = s.model_call.prompt_tokens + s.model_call.completion_tokens
            parts.append(
                f"<details open><summary>step {s.index} · {tokens} tokens · {s.wall_s:.2f} s</summary>"
            )
            parts.append("<b>observation</b>" + _pre(s.observation))
            if s.image:
                parts.append(f"<img src='{html.escape(s.image, quote=True)}' alt='screenshot'>")
            parts.append("<b>reply</b>" + _pre(s.reply))
            if s.parse_error:
                parts.append(f"<p class='bad'>parse error: {html.escape(s.parse_error)}</p>")
            elif s.action is not None:
                parts.append("<b>action</b>" + _pre(json.dumps(s.action, ensure_ascii=False, indent=1)))
            if s.info:
                parts.append("<b>info</b>" + _pre(json.dumps(s.info, ensure_ascii=False, default=str)))
            parts.append("</details>")
        if e.final_observation:
            parts.append("<b>final observation</b>" + _pre(e.final_observation))
    return "\n".join(parts) + "\n"


def write_html(path: Path | str, episodes: Sequence[Episode], title: str = "episodes") -> Path:
    """Write `render_html(episodes)` to `path`."""
    path = Path(path)
    write_text_atomic(path, render_html(episodes, title))
    return path
