"""GLoW and its LLM baselines on text games (arXiv 2509.24116).

`GLoWPlayer.run` is the paper's Go-Explore loop, repeated until the env-step budget is spent:
1. select: g_LLM(F) -> W_global; align_LLM scores archived cells against it; restore the argmax
   with `set_state` (or by replaying its actions);
2. explore with multi-path advantage reflection (MAR): n = 3 rollouts in sequence from the restored
   state; after each, f_LLM(T_s, F) -> W_local, which conditions the next rollout;
3. every rollout updates the frontier F (top-k by v(τ)) and every step the archive A (novelty test).
The policy is Agent_LLM(s_t, h_t, W_local, T_s, F); its free-text command goes to the game as generated
(the paper's soft constraint: the valid actions are listed in the prompt, and a command off that list
spends its env step on the game's own "I don't understand"), or, with `remap` on, is mapped to the
nearest valid action (`nearest_valid`). Either way each off-list command is counted.

`ReActPlayer` (think, then act) and `ReflexionPlayer` (a reflection between episodes that conditions
the next) play episodes of `episode_steps` at the same env-step budget.

Each is a player, not an `iclr26.agents.Agent`: `run(game)` drives the whole game itself (resets,
restores saved states, spends the env-step budget), where an `Agent` only replies to the
observation `agents.run_episode` shows it.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from iclr26.core.llm.base import ChatModel, Message
from iclr26.core.llm.usage import Usage
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.glow import prompts as P
from iclr26.glow.env import BudgetExhausted, TextGame
from iclr26.glow.memory import Archive, Cell, Frontier, Trajectory, Transition, choice_index

Rng = random.Random | np.random.Generator

# -- the soft constraint ------------------------------------------------------------------------

_DIRECTIONS = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "u": "up",
    "d": "down",
}
_ARTICLES = {"the", "a", "an"}


def normalise(command: str) -> str:
    """Lower case, punctuation and articles dropped, `n` -> `north`, `go north` -> `north`."""
    tokens = [t for t in re.sub(r"[^a-z0-9 ]+", " ", command.lower()).split() if t not in _ARTICLES]
    if len(tokens) == 2 and tokens[0] in ("go", "walk", "move", "head"):
        tokens = tokens[1:]
    if len(tokens) == 1:
        tokens = [_DIRECTIONS.get(tokens[0], tokens[0])]
    return " ".join(tokens)


def similarity(a: str, b: str) -> float:
    """Mean of token Jaccard overlap and difflib's character ratio, in [0, 1]."""
    ta, tb = set(a.split()), set(b.split())
    jaccard = len(ta & tb) / len(ta | tb) if ta | tb else 1.0
    return 0.5 * jaccard + 0.5 * difflib.SequenceMatcher(None, a, b).ratio()


def nearest_valid(action: str, valid: Sequence[str]) -> tuple[str, bool]:
    """The valid action nearest to `action`, and whether it had to be remapped.

    Nearest: the valid action equal after `normalise` (not a remap), else the one of highest
    `similarity` (the first listed on ties). With no valid list the action is kept as generated.
    """
    if not valid:
        return action, False
    norm = normalise(action)
    for v in valid:
        if normalise(v) == norm:
            return v, False
    scores = [similarity(norm, normalise(v)) for v in valid]
    return valid[int(np.argmax(scores))], True


def send_command(command: str, valid: Sequence[str], remap: bool) -> tuple[str, bool]:
    """The command sent to the game for the generated `command`, and whether it was off the valid list.

    A command equal to a valid action after `normalise` is sent as that action. Any other is off the
    list: with `remap` it becomes the nearest valid action (`nearest_valid`); without, the paper's soft
    constraint, it is sent as generated (one line) and the game answers it. With no valid list nothing
    is off it.
    """
    if remap:
        return nearest_valid(command, valid)
    norm = normalise(command)
    match = next((v for v in valid if normalise(v) == norm), None)
    if match is not None or not valid:
        return (match if match is not None else " ".join(command.split())), False
    return " ".join(command.split()), True


# -- configs ------------------------------------------------------------------------------------


def _check_positive(obj: object, names: Sequence[str]) -> None:
    """`check_int(…, 1)` on each of `names`: the error names the config and the field."""
    for name in names:
        check_int(f"{type(obj).__name__}.{name}", getattr(obj, name), 1)


@dataclass(frozen=True)
class GLoWConfig:
    """GLoW's settings; defaults are the paper's where it gives them (n = 3, k = 5)."""

    n_rollouts: int = 3
    """rollouts played in sequence from each selected state (MAR's n)"""
    k: int = 5
    """size of the frontier F (top-k trajectories by v(τ))"""
    rollout_steps: int = 20
    """policy turns per rollout (a reply with no command uses a turn but no env step)"""
    history: int = 8
    """past (command, observation) pairs shown to the policy as h_t"""
    max_tokens: int = 48
    """completion tokens per policy call"""
    memory_max_tokens: int = 256
    """completion tokens per g_LLM, align_LLM and f_LLM call"""
    temperature: float = 0.7
    """sampling temperature of the policy (the memory calls use 0)"""
    n_critical: int = 4
    """critical states g_LLM is asked to name (W_global)"""
    max_candidates: int = 12
    """archived cells shown to align_LLM: half the highest-scoring, half drawn uniformly from the rest"""
    max_valid_shown: int = 40
    """valid actions listed in the policy prompt (all of them are used by the soft constraint)"""
    max_observation_chars: int = 800
    """observations are cut to this many characters in prompts"""
    frontier_steps: int = 30
    """actions shown per trajectory when F or T_s is rendered in a prompt"""
    restore: Literal["set_state", "replay"] = "set_state"
    """how to return to the selected state: the emulator's set_state, or replaying its actions"""
    max_idle_iterations: int = 3
    """stop after this many select-explore iterations in a row take no env step"""
    mar: bool = True
    """multi-path advantage reflection: f_LLM writes W_local between rollouts (off: no reflection, no T_s)"""
    global_memory: bool = True
    """W_global: select with g_LLM and align_LLM (off: a uniform draw from the archive)"""
    frontier: bool = True
    """the frontier F in prompts (off: no F in any prompt; g_LLM reads archived states instead)"""
    remap: bool = False
    """map each generated command to the nearest valid action (off, the paper: send it as generated);
    in `iclr26 run glow` the run's `remap` sets it"""

    def __post_init__(self) -> None:
        _check_positive(
            self,
            (
                "n_rollouts",
                "k",
                "rollout_steps",
                "history",
                "max_tokens",
                "memory_max_tokens",
                "n_critical",
                "max_candidates",
                "max_valid_shown",
                "max_observation_chars",
                "frontier_steps",
                "max_idle_iterations",
            ),
        )
        check_interval("GLoWConfig.temperature", self.temperature, 0)
        check_in("GLoWConfig.restore", self.restore, ("set_state", "replay"))


@dataclass(frozen=True)
class ReActConfig:
    """The ReAct baseline: episodes of `episode_steps` turns, each a thought then a command."""

    episode_steps: int = 50
    """policy turns per episode before the game is reset"""
    history: int = 8
    """past (command, observation) pairs shown to the policy"""
    max_tokens: int = 128
    """completion tokens per call (the thought and the command)"""
    temperature: float = 0.7
    """sampling temperature"""
    max_valid_shown: int = 40
    """valid actions listed in the prompt (all are used by the soft constraint)"""
    max_observation_chars: int = 800
    """observations are cut to this many characters in prompts"""
    max_idle_episodes: int = 3
    """stop after this many episodes in a row take no env step"""
    remap: bool = False
    """map each generated command to the nearest valid action (off, the paper: send it as generated);
    in `iclr26 run glow` the run's `remap` sets it"""

    def __post_init__(self) -> None:
        _check_positive(
            self,
            (
                "episode_steps",
                "history",
                "max_tokens",
                "max_valid_shown",
                "max_observation_chars",
                "max_idle_episodes",
            ),
        )
        check_interval(f"{type(self).__name__}.temperature", self.temperature, 0)


@dataclass(frozen=True)
class ReflexionConfig(ReActConfig):
    """Reflexion: ReAct episodes, with a reflection after each that the next episodes read."""

    max_reflections: int = 3
    """most recent reflections shown to the policy"""
    reflection_max_tokens: int = 160
    """completion tokens per reflection"""
    episode_shown: int = 30
    """last steps of an episode shown to the reflection"""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_positive(self, ("max_reflections", "reflection_max_tokens", "episode_shown"))


# -- the run record -----------------------------------------------------------------------------


@dataclass
class RunResult:
    """One agent's run on one game: scores against env steps, LLM spend and a transcript."""

    agent: str
    game: str
    max_score: int  # the best game score reached at any step
    game_max_score: int  # the game's maximum (0 when unknown)
    steps_used: int  # env steps spent
    curve: list[tuple[int, int]]  # (env steps used, best score so far), from the reset on
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    calls: dict[str, int]  # LLM calls per kind (policy, global, align, reflect, reflexion)
    parse_failures: int  # replies that could not be parsed (all kinds)
    failures: dict[str, int]  # parse failures per kind
    remapped: int  # generated commands off the valid list (remapped when `remap` is on, else sent as is)
    actions: int  # commands sent to the game
    stop_reason: str  # budget / no_progress
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def normalised_score(self) -> float:
        """max_score / the game's max score (nan when the max is unknown)."""
        return self.max_score / self.game_max_score if self.game_max_score else float("nan")

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self, transcript: bool = False) -> dict[str, Any]:
        """JSON-ready fields (the transcript only when asked)."""
        d = asdict(self)
        d["curve"] = [list(p) for p in self.curve]
        d["normalised_score"] = self.normalised_score
        if not transcript:
            d.pop("transcript")
        return d


def _cut(text: str, n: int) -> str:
    """`text` on at most `n` characters, marked when cut."""
    text = text.strip()
    return text if len(text) <= n else text[: n - 3] + "..."


class _Recorder:
    """What one run has spent and seen: model calls, the score curve, counts and the transcript."""

    def __init__(self, model: ChatModel, game: TextGame, agent: str, rng: Rng) -> None:
        if game.budget_left is None:
            raise ValueError(
                f"game {game.name!r} has no env-step budget: build it with a step budget, so that the "
                "agents compare at equal numbers of interactions"
            )
        self.model, self.game, self.agent, self.rng = model, game, agent, rng
        self.usage0: Usage = model.usage.total
        self.best = -(10**9)
        self.curve: list[tuple[int, int]] = []
        self.transcript: list[dict[str, Any]] = []
        self.calls: dict[str, int] = {}
        self.failures: dict[str, int] = {}
        self.remapped = 0
        self.actions = 0
        self.remap = False  # set by the player from its config

    def ask(
        self, kind: str, prompt: str, max_tokens: int, temperature: float = 0.0, prefix: str | None = None
    ) -> str:
        """One model call of `kind`, seeded from the run's rng; with `prefix`, the reply continues that
        assistant text (returned without it)."""
        messages: list[Message] = [
            {"role": "system", "content": P.SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        seed = choice_index(self.rng, 2**31 - 1)
        (c,) = self.model.chat(
            messages, n=1, temperature=temperature, max_tokens=max_tokens, seed=seed, prefix=prefix
        )
        self.calls[kind] = self.calls.get(kind, 0) + 1
        return c.text

    def failed(self, kind: str, reply: str, error: str) -> None:
        """Count and log a reply that did not parse."""
        self.failures[kind] = self.failures.get(kind, 0) + 1
        self.event("parse_error", call=kind, reply=_cut(reply, 400), error=error)

    def mark(self) -> None:
        """Add the current (steps used, best score) point to the curve."""
        self.best = max(self.best, self.game.score)
        self.curve.append((self.game.steps_used, self.best))

    def event(self, kind: str, **data: Any) -> None:
        """A transcript entry, stamped with the env steps used so far."""
        self.transcript.append({"kind": kind, "steps_used": self.game.steps_used, **data})

    def act(
        self, kind: str, prompt: str, max_tokens: int, temperature: float, think: bool = False
    ) -> tuple[str, P.ParseResult[str], str | None]:
        """A policy call: the reply, its parse, and the valid action it maps to (None: no command).

        The reply is started for the model: with "Action:" (the command directly), or, when `think`
        (ReAct), with "Thought:"; a thought that ends without a command is continued once with
        "Action:" after it, a second call of the same kind. Small models rarely keep a format
        otherwise; the command itself is still free text: `send_command` decides what goes to the game.
        """
        start = "Thought:" if think else "Action:"
        reply = _continued(start, self.ask(kind, prompt, max_tokens, temperature, prefix=start))
        parsed = P.parse_action(reply)
        if think and not parsed.ok:
            head = reply.split("Action:")[0].rstrip() + "\nAction:"
            reply = _continued(head, self.ask(kind, prompt, 24, temperature, prefix=head))
            parsed = P.parse_action(reply)
        if not parsed.ok:
            self.failed(kind, reply, parsed.error or "")
            return reply, parsed, None
        action, off_list = send_command(parsed.value or "", self.game.valid_actions(), self.remap)
        self.remapped += off_list
        return reply, parsed, action

    def turn(
        self, prompt: str, cfg: Any, obs: str, history: list[tuple[str, str]], think: bool = False
    ) -> tuple[str, int, bool, str | None]:
        """One policy turn: (observation, reward, done, action). A reply with no command steps nothing:
        its error message, with the last observation, is the next observation and action is None
        (and `history` records it). BudgetExhausted propagates."""
        reply, parsed, action = self.act("policy", prompt, cfg.max_tokens, cfg.temperature, think=think)
        if action is None:
            history.append(("(no command)", parsed.error or P.NO_ACTION))
            return f"{parsed.error}\n\n{_cut(obs, cfg.max_observation_chars)}", 0, False, None
        obs, reward, done = self.step(reply, parsed.value or action, action)
        return obs, reward, done, action

    def step(self, reply: str, generated: str, action: str) -> tuple[str, int, bool]:
        """Send `action` to the game (BudgetExhausted propagates); log it and extend the curve."""
        obs, reward, done, _ = self.game.step(action)
        self.actions += 1
        self.mark()
        self.event(
            "step",
            reply=_cut(reply, 400),
            action=action,
            generated=generated if generated != action else None,
            observation=_cut(obs, 400),
            reward=reward,
            score=self.game.score,
            done=done,
        )
        return obs, reward, done

    def result(self, stop_reason: str) -> RunResult:
        """The run's `RunResult`, with the model's usage since the run began."""
        used = self.model.usage.total - self.usage0
        return RunResult(
            agent=self.agent,
            game=self.game.name,
            max_score=max(self.best, self.game.score) if self.curve else self.game.score,
            game_max_score=int(getattr(self.game, "max_score", 0) or 0),
            steps_used=self.game.steps_used,
            curve=list(self.curve),
            llm_calls=used.calls,
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
            calls=dict(self.calls),
            parse_failures=sum(self.failures.values()),
            failures=dict(self.failures),
            remapped=self.remapped,
            actions=self.actions,
            stop_reason=stop_reason,
            transcript=self.transcript,
        )


def _continued(prefix: str, text: str) -> str:
    """The whole reply from a continuation of `prefix`; a model that repeats the prefix (or a field
    name such as "Action:") is not given it twice."""
    if text.lstrip().startswith(prefix) or text.lstrip().startswith(("Action:", "Thought:")):
        return text.lstrip()
    return prefix + text


def _history_text(history: Sequence[tuple[str, str]], n: int, chars: int) -> str:
    """The last `n` (command, observation) pairs as `> command` / observation lines."""
    if not history:
        return "(none yet)"
    return "\n".join(f"> {a}\n{_cut(o, chars)}" for a, o in history[-n:])


def _valid_text(valid: Sequence[str], n: int) -> str:
    """The first `n` valid actions, comma-separated."""
    if not valid:
        return "(not known; any command)"
    return ", ".join(valid[:n]) + (f", ... ({len(valid) - n} more)" if len(valid) > n else "")


def _budget_spent(game: TextGame) -> bool:
    """Whether the env-step budget is used up."""
    return game.budget_left is not None and game.budget_left <= 0


# -- GLoW ---------------------------------------------------------------------------------------


class GLoWPlayer:
    """GLoW: Go-Explore over the dual-scale memory (F, A, W_global, W_local) with an LLM policy."""

    def __init__(self, model: ChatModel, config: GLoWConfig | None = None) -> None:
        self.model = model
        self.config = config or GLoWConfig()

    @property
    def name(self) -> str:
        """`glow`, with the ablated parts (`glow-mar-wglobal-f` is "without all three")."""
        off = [n for n, on in (("mar", self.config.mar), ("wglobal", self.config.global_memory)) if not on]
        off += [] if self.config.frontier else ["f"]
        return "glow" + "".join(f"-{n}" for n in off)

    def run(self, game: TextGame, rng: Rng | None = None) -> RunResult:
        """Select and explore until the game's env-step budget is spent."""
        cfg = self.config
        rng = np.random.default_rng(0) if rng is None else rng
        rec = _Recorder(self.model, game, self.name, rng)
        rec.remap = cfg.remap
        obs0 = game.reset()
        s0 = game.get_state()
        rec.mark()
        self._s0, self._score0 = s0, game.score
        archive, frontier = Archive(), Frontier(cfg.k)
        archive.add(s0, game.score, 0, (), obs0)
        self._w_global: list[P.CriticalState] = []
        self._w_key: Any = None
        stop, idle = "budget", 0
        while not _budget_spent(game):
            used = game.steps_used
            cell, reason = self._select(rec, archive, frontier)
            cell.visits += 1
            # Restore s_next (by set_state, or by replaying the actions that reached it).
            try:
                self._restore(game, cell)
            except BudgetExhausted:  # a replay longer than the budget left
                break
            rec.event("restore", cell=cell.key, score=cell.score, steps=cell.steps, reason=reason)
            rollouts: list[Trajectory] = []  # T_s: the rollouts from this start
            w_local: list[P.Insight] = []
            exhausted = False
            for i in range(cfg.n_rollouts):
                if i:
                    try:
                        self._restore(game, cell)
                    except BudgetExhausted:
                        exhausted = True
                        break
                tau, exhausted = self._rollout(rec, game, cell, rollouts, w_local, frontier, archive)
                rollouts.append(tau)
                entered = frontier.add(tau)
                rec.event(
                    "rollout", index=i, value=tau.running_value, steps=len(tau) - tau.origin, frontier=entered
                )
                if exhausted or _budget_spent(game):
                    break
                if cfg.mar and i < cfg.n_rollouts - 1:
                    # MAR: W_local <- f_LLM(T_s, F) (none after the last rollout: it would condition nothing)
                    w_local = self._reflect(rec, rollouts, frontier) or w_local
            if exhausted:
                break
            idle = 0 if game.steps_used > used else idle + 1
            if idle >= cfg.max_idle_iterations:
                stop = "no_progress"
                break
        result = rec.result(stop)
        result.transcript.append(
            {"kind": "end", "steps_used": game.steps_used, "frontier": frontier.render()}
        )
        return result

    def _restore(self, game: TextGame, cell: Cell) -> None:
        """Return the game to `cell`'s state."""
        if self.config.restore == "set_state":
            game.set_state(cell.state)
        else:
            game.replay([t.action for t in cell.prefix])

    # -- select --------------------------------------------------------------------------------

    def _select(self, rec: _Recorder, archive: Archive, frontier: Frontier) -> tuple[Cell, str]:
        """s_next: the argmax of align_LLM's scores against W_global, or a uniform draw; with the reason."""
        cfg, cells = self.config, archive.cells()
        if len(cells) == 1:
            return cells[0], "the start state (the archive holds nothing else yet)"
        if not cfg.global_memory:
            return archive.sample_uniform(rec.rng), f"uniform draw over {len(cells)} archived states"
        w_global = self._global_memory(rec, archive, frontier)
        if not w_global:
            return archive.sample_uniform(rec.rng), "uniform draw: W_global could not be read"
        candidates = self._candidates(cells, rec.rng)
        listing = "\n".join(
            f"{i}. score {c.score}, {c.steps} steps in"
            + (f", after '{c.prefix[-1].action}'" if c.prefix else ", the start")
            + f": {_cut(c.observation, 200)}"
            for i, c in enumerate(candidates, start=1)
        )
        prompt = P.ALIGN_PROMPT.format(global_memory=self._render_global(w_global), candidates=listing)
        reply = rec.ask("align", prompt, cfg.memory_max_tokens)
        parsed = P.parse_scores(reply, len(candidates))
        if not parsed.ok or parsed.value is None:
            rec.failed("align", reply, parsed.error or "")
            return candidates[
                choice_index(rec.rng, len(candidates))
            ], "uniform draw: align_LLM's scores unreadable"
        scores = parsed.value
        # s_next = argmax align score; ties: higher game score, then fewer steps, then listing order.
        best = max(
            range(len(candidates)), key=lambda i: (scores[i], candidates[i].score, -candidates[i].steps, -i)
        )
        top = max(w_global, key=lambda c: c.potential)
        return candidates[best], (
            f"align_LLM rated it {scores[best]:g}/10, the best of {len(candidates)} candidates against "
            f"W_global (highest potential: '{_cut(top.state, 80)}', v={top.value:g}, v'={top.potential:g})"
        )

    def _global_memory(self, rec: _Recorder, archive: Archive, frontier: Frontier) -> list[P.CriticalState]:
        """W_global = g_LLM(F) (without F: over the best archived states), cached while its input holds."""
        cfg = self.config
        if cfg.frontier:
            key: Any = ("F", frontier.version)
            prompt = P.GLOBAL_PROMPT.format(frontier=frontier.render(cfg.frontier_steps), n=cfg.n_critical)
        else:
            top = sorted(archive.cells(), key=lambda c: (-c.score, c.steps))[: cfg.max_candidates]
            key = ("A", tuple((c.key, c.score) for c in top))
            states = "\n".join(f"- score {c.score}: {_cut(c.observation, 200)}" for c in top)
            prompt = P.GLOBAL_FROM_ARCHIVE_PROMPT.format(states=states, n=cfg.n_critical)
        if key == self._w_key:
            return self._w_global
        reply = rec.ask("global", prompt, cfg.memory_max_tokens)
        parsed = P.parse_global(reply, cfg.n_critical)
        if not parsed.ok or not parsed.value:
            rec.failed("global", reply, parsed.error or "")
            return self._w_global  # the last readable W_global, if any
        self._w_global, self._w_key = parsed.value, key
        rec.event("w_global", critical=[asdict(c) for c in parsed.value])
        return self._w_global

    @staticmethod
    def _render_global(w_global: Sequence[P.CriticalState]) -> str:
        return "\n".join(f"- {c.state} (value {c.value:g}, potential {c.potential:g})" for c in w_global)

    def _candidates(self, cells: list[Cell], rng: Rng) -> list[Cell]:
        """At most `max_candidates` cells: half the best-scoring (fewest steps first), half uniform."""
        m = self.config.max_candidates
        if len(cells) <= m:
            return cells
        ranked = sorted(cells, key=lambda c: (-c.score, c.steps))
        head, rest = ranked[: m // 2], ranked[m // 2 :]
        for _ in range(m - len(head)):
            head.append(rest.pop(choice_index(rng, len(rest))))
        return head

    # -- explore -------------------------------------------------------------------------------

    def _memory(
        self, rollouts: Sequence[Trajectory], w_local: Sequence[P.Insight], frontier: Frontier
    ) -> str:
        """The memory sections of the policy prompt that the configuration enables."""
        cfg, out = self.config, ""
        if cfg.frontier and len(frontier):
            out += P.FRONTIER_SECTION.format(frontier=frontier.render(cfg.frontier_steps))
        if cfg.mar and rollouts:
            out += P.ROLLOUTS_SECTION.format(rollouts=self._render_rollouts(rollouts))
        if cfg.mar and w_local:
            out += P.LESSONS_SECTION.format(lessons="\n".join(f"- {w.state}: {w.advantage}" for w in w_local))
        return out

    def _render_rollouts(self, rollouts: Sequence[Trajectory]) -> str:
        """T_s as numbered lines: the score gained, the actions, how it ended."""
        lines = []
        for i, tau in enumerate(rollouts, start=1):
            gained = tau.running_value - (
                tau.transitions[tau.origin - 1].score if tau.origin else tau.start_score
            )
            last = tau.transitions[-1].observation if len(tau) > tau.origin else ""
            lines.append(
                f"{i}. +{gained} in {len(tau) - tau.origin} steps: "
                f"{tau.render(since=tau.origin, max_steps=self.config.frontier_steps)}"
                + (f" | ended with: {_cut(last, 120)}" if last else "")
            )
        return "\n".join(lines)

    def _rollout(
        self,
        rec: _Recorder,
        game: TextGame,
        cell: Cell,
        rollouts: Sequence[Trajectory],
        w_local: Sequence[P.Insight],
        frontier: Frontier,
        archive: Archive,
    ) -> tuple[Trajectory, bool]:
        """One rollout of at most `rollout_steps` turns from `cell`; (its trajectory, budget exhausted)."""
        cfg = self.config
        prefix = list(cell.prefix)
        played: list[Transition] = []
        history = [(t.action, t.observation) for t in prefix[-cfg.history :]]
        obs, exhausted, state = cell.observation, False, cell.state
        for _ in range(cfg.rollout_steps):
            if _budget_spent(game):
                exhausted = True
                break
            valid = game.valid_actions()
            # a_t ~ Agent_LLM(s_t, h_t, W_local, T_s, F)
            prompt = P.POLICY_PROMPT.format(
                memory=self._memory(rollouts, w_local, frontier),
                score=game.score,
                history=_history_text(history, cfg.history, 300),
                observation=_cut(obs, cfg.max_observation_chars),
                valid_actions=_valid_text(valid, cfg.max_valid_shown),
            )
            try:
                obs, reward, done, action = rec.turn(prompt, cfg, obs, history)
            except BudgetExhausted:
                exhausted = True
                break
            if action is None:
                continue
            state = game.get_state()
            played.append(Transition(action, obs, reward, game.score, state))
            history.append((action, obs))
            if done:
                break
            # A <- A ∪ {s_t} when novel (unseen hash, higher score, or fewer steps at the same score)
            archive.add(state, game.score, len(prefix) + len(played), prefix + played, obs)
        tau = Trajectory(self._s0, prefix + played, state, origin=len(prefix), start_score=self._score0)
        return tau, exhausted

    def _reflect(self, rec: _Recorder, rollouts: Sequence[Trajectory], frontier: Frontier) -> list[P.Insight]:
        """W_local = f_LLM(T_s, F): 2-4 critical states with their advantage ([] when unreadable)."""
        cfg = self.config
        section = (
            P.FRONTIER_SECTION.format(frontier=frontier.render(cfg.frontier_steps)) if cfg.frontier else ""
        )
        prompt = P.REFLECT_PROMPT.format(frontier=section, rollouts=self._render_rollouts(rollouts))
        reply = rec.ask("reflect", prompt, cfg.memory_max_tokens)
        parsed = P.parse_reflection(reply)
        if not parsed.ok or not parsed.value:
            rec.failed("reflect", reply, parsed.error or "")
            return []
        rec.event("reflection", after_rollout=len(rollouts), w_local=[asdict(w) for w in parsed.value])
        return parsed.value


# -- ReAct and Reflexion ------------------------------------------------------------------------


class ReActPlayer:
    """ReAct: each turn a short thought, then one command; the game is reset every `episode_steps` turns."""

    name = "react"

    def __init__(self, model: ChatModel, config: ReActConfig | None = None) -> None:
        self.model = model
        self.config = config or self._default_config()

    def _default_config(self) -> ReActConfig:
        return ReActConfig()

    def _memory(self) -> str:
        """Text put before the prompt (Reflexion's reflections); none for ReAct."""
        return ""

    def _after_episode(self, rec: _Recorder, episode: list[Transition], score: int) -> None:
        """Called between episodes (Reflexion reflects here)."""

    def run(self, game: TextGame, rng: Rng | None = None) -> RunResult:
        """Play episodes until the game's env-step budget is spent."""
        cfg = self.config
        rng = np.random.default_rng(0) if rng is None else rng
        rec = _Recorder(self.model, game, self.name, rng)
        rec.remap = cfg.remap
        stop, idle, first = "budget", 0, True
        while not _budget_spent(game):
            obs, used = game.reset(), game.steps_used
            if first:
                rec.mark()
                first = False
            rec.event("reset", observation=_cut(obs, 400))
            history: list[tuple[str, str]] = []
            episode: list[Transition] = []
            exhausted = False
            for _ in range(cfg.episode_steps):
                if _budget_spent(game):
                    exhausted = True
                    break
                prompt = P.REACT_PROMPT.format(
                    memory=self._memory(),
                    score=game.score,
                    history=_history_text(history, cfg.history, 300),
                    observation=_cut(obs, cfg.max_observation_chars),
                    valid_actions=_valid_text(game.valid_actions(), cfg.max_valid_shown),
                )
                try:
                    obs, reward, done, action = rec.turn(prompt, cfg, obs, history, think=True)
                except BudgetExhausted:
                    exhausted = True
                    break
                if action is None:
                    continue
                episode.append(Transition(action, obs, reward, game.score))
                history.append((action, obs))
                if done:
                    break
            if exhausted or _budget_spent(game):
                break
            idle = 0 if game.steps_used > used else idle + 1
            if idle >= cfg.max_idle_episodes:
                stop = "no_progress"
                break
            self._after_episode(rec, episode, game.score)
        return rec.result(stop)


class ReflexionPlayer(ReActPlayer):
    """Reflexion: ReAct episodes; after each the model reflects, and later episodes read it."""

    name = "reflexion"
    config: ReflexionConfig

    def __init__(self, model: ChatModel, config: ReflexionConfig | None = None) -> None:
        super().__init__(model, config)
        self.reflections: list[str] = []

    def _default_config(self) -> ReflexionConfig:
        return ReflexionConfig()

    def run(self, game: TextGame, rng: Rng | None = None) -> RunResult:
        """Play episodes, reflecting between them, until the env-step budget is spent."""
        self.reflections = []
        return super().run(game, rng)

    def _memory(self) -> str:
        if not self.reflections:
            return ""
        recent = self.reflections[-self.config.max_reflections :]
        return P.REFLEXION_SECTION.format(reflections="\n".join(f"- {r}" for r in recent))

    def _after_episode(self, rec: _Recorder, episode: list[Transition], score: int) -> None:
        cfg = self.config
        shown = episode[-cfg.episode_shown :]
        text = "\n".join(f"> {t.action}\n{_cut(t.observation, 200)}" for t in shown) or "(no moves)"
        prompt = P.REFLEXION_PROMPT.format(episode=text, score=score, best=rec.best)
        reply = rec.ask("reflexion", prompt, cfg.reflection_max_tokens, cfg.temperature)
        parsed = P.parse_plan(reply)
        if not parsed.ok or parsed.value is None:
            rec.failed("reflexion", reply, parsed.error or "")
            return
        self.reflections.append(parsed.value)
        rec.event("reflection", text=parsed.value)
