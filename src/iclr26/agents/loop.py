"""The step loop: an agent acts on an environment until it stops or a budget runs out.

`run_episode(task_id, env, agent, parser, budget)` shows the environment's observation to the
agent, parses its reply into an `Action`, and steps the environment with it, until:
- the agent ends it (`done`, `fail`, or `answer` with an ANSWER line),
- the environment says the task is over (`env_done`),
- a budget runs out (`max_steps`, `max_tokens`, `max_wall_time`), or
- the agent's model fails (`error`, with the message in `meta["error"]`).
A reply that does not parse, or an action the environment cannot carry out (`InvalidAction`),
becomes the next observation, so the agent can correct itself; neither is a crash. The
environment then scores the episode (`evaluate`), whatever stopped it.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from iclr26.agents.actions import Action, ActionParser, InvalidAction, ParseError
from iclr26.agents.episode import Episode, ModelCall, Step, read_episodes, write_episodes
from iclr26.core.errors import UserError
from iclr26.core.llm import ChatModel, LLMError, image_part
from iclr26.core.validation import check_int, check_seconds


@dataclass(frozen=True)
class Observation:
    """What the agent is shown: text, and optionally an image (array, PIL image or file path)."""

    text: str
    image: Any = None
    image_file: str | None = None  # where the image was saved, for the episode viewer


@dataclass(frozen=True)
class StepOutcome:
    """The environment's answer to an action."""

    observation: Observation | str
    done: bool = False  # the task is over (the environment decided)
    info: dict[str, Any] = field(default_factory=dict)


class Environment(Protocol):
    """A task the agent acts on."""

    def reset(self) -> Observation | str:
        """Set the task up and return the first observation (the instruction)."""
        ...

    def step(self, action: Action) -> StepOutcome:
        """Carry out one non-terminal action; raise `InvalidAction` for one it cannot."""
        ...

    def evaluate(self, answer: str | None) -> float | bool:
        """Score the final state (and the answer, if the agent gave one): 1.0 / True is success.

        An environment whose score depends on how the episode ended (a task that expects FAIL)
        may also define `stopped(stop_reason)`; `run_episode` calls it just before `evaluate`.
        """
        ...

    def close(self) -> None:
        """Tear the task down."""
        ...


@dataclass(frozen=True)
class AgentReply:
    """An agent's reply text and what producing it cost."""

    text: str
    call: ModelCall = field(default_factory=ModelCall)


class Agent(Protocol):
    """Something that replies to observations: an LLM agent, an oracle, a null agent."""

    name: str

    def reset(self, task_id: str, instruction: str) -> None:
        """Start a new episode."""
        ...

    def act(self, observation: Observation) -> AgentReply:
        """The reply to `observation`."""
        ...


@dataclass(frozen=True)
class Budget:
    """Limits of one episode; None switches a limit off."""

    max_steps: int = 30  # agent turns, parse failures included
    max_tokens: int | None = None  # prompt + completion tokens over the episode
    max_wall_s: float | None = None  # wall clock of the whole episode, seconds

    def __post_init__(self) -> None:
        check_int("Budget.max_steps", self.max_steps, 1)
        check_int("Budget.max_tokens", self.max_tokens, 1, optional=True)
        check_seconds("Budget.max_wall_s", self.max_wall_s, optional=True)


def _as_observation(obs: Observation | str) -> Observation:
    return obs if isinstance(obs, Observation) else Observation(str(obs))


def _exhausted(budget: Budget, steps: int, tokens: int, started: float) -> str | None:
    """The name of the budget that is spent, if any."""
    if steps >= budget.max_steps:
        return "max_steps"
    if budget.max_tokens is not None and tokens >= budget.max_tokens:
        return "max_tokens"
    if budget.max_wall_s is not None and time.perf_counter() - started >= budget.max_wall_s:
        return "max_wall_time"
    return None


def run_episode(
    task_id: str,
    env: Environment,
    agent: Agent,
    parser: ActionParser,
    budget: Budget = Budget(),
    *,
    on_step: Callable[[Step], None] | None = None,
) -> Episode:
    """Run `agent` on `env` until it stops or `budget` runs out; score it; return the `Episode`."""
    started = time.perf_counter()
    episode = Episode(task_id=task_id, agent=agent.name)
    tokens, answer = 0, None
    try:
        obs = _as_observation(env.reset())
        agent.reset(task_id, obs.text)
        while not episode.stop_reason:
            spent = _exhausted(budget, len(episode.steps), tokens, started)
            if spent:
                episode.stop_reason = spent
                break
            t0 = time.perf_counter()
            try:
                reply = agent.act(obs)
            except LLMError as e:
                episode.stop_reason, episode.meta["error"] = "error", str(e)
                break
            tokens += reply.call.prompt_tokens + reply.call.completion_tokens
            step = Step(len(episode.steps), obs.text, reply.text, None, model_call=reply.call)
            step.image = obs.image_file
            episode.steps.append(step)
            over = budget.max_tokens is not None and tokens >= budget.max_tokens
            obs, episode.stop_reason, answer = _carry_out(step, env, parser, over_tokens=over)
            step.wall_s = time.perf_counter() - t0
            if on_step is not None:
                on_step(step)
        if episode.stop_reason not in ("done", "fail", "answer"):
            episode.final_observation = obs.text  # what the agent never got to see
        stopped = getattr(env, "stopped", None)  # optional: environments that score how it ended
        if callable(stopped):
            stopped(episode.stop_reason)
        result = env.evaluate(answer)
        episode.score = float(result)
        episode.success = bool(result) if isinstance(result, bool) else episode.score >= 1.0
        episode.answer = answer
    finally:
        env.close()
        episode.wall_s = time.perf_counter() - started
    return episode


def _carry_out(
    step: Step, env: Environment, parser: ActionParser, *, over_tokens: bool
) -> tuple[Observation, str, str | None]:
    """Parse the step's reply and act on it: (next observation, stop reason or '', answer)."""
    try:
        action = parser.parse(step.reply)
    except ParseError as e:
        step.parse_error = str(e)
        return Observation(f"Your reply could not be read as an action: {e}"), "", None
    step.action = {"kind": action.kind, "content": action.content, "language": action.language}
    if action.terminal:
        return Observation(""), action.kind, action.content if action.kind == "answer" else None
    if over_tokens:  # the reply that crossed the token budget is not carried out
        return Observation(""), "max_tokens", None
    try:
        outcome = env.step(action)
    except InvalidAction as e:
        step.info = {"invalid_action": str(e)}
        return Observation(f"That action could not be carried out: {e}"), "", None
    step.info = dict(outcome.info)
    return _as_observation(outcome.observation), "env_done" if outcome.done else "", None


def run_suite(
    task_ids: Sequence[str],
    make_env: Callable[[str], Environment],
    agent: Agent,
    parser: ActionParser,
    budget: Budget = Budget(),
    *,
    episodes_file: Path | str | None = None,
) -> list[Episode]:
    """`run_episode` over tasks, as a `core.study.Study` of one arm (the agent, by its name) over
    the tasks as units, run one task at a time in this process (the agent keeps state between turns).

    With `episodes_file`, the study's ledger is `cells.jsonl` beside it: rerunning with the same file
    resumes (the tasks this agent already finished there are not rerun: their episodes are read back
    from their cells), and the episodes `episodes_file` does not hold yet are appended to it in the
    episode viewer's format. Without it the cells go to a temporary folder.
    """
    with contextlib.ExitStack() as stack:
        if episodes_file is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="iclr26-suite-")))
        else:
            folder = Path(episodes_file).parent
            folder.mkdir(parents=True, exist_ok=True)
        return _suite_study(task_ids, make_env, agent, parser, budget, folder, episodes_file)


def _suite_study(
    task_ids: Sequence[str],
    make_env: Callable[[str], Environment],
    agent: Agent,
    parser: ActionParser,
    budget: Budget,
    folder: Path,
    episodes_file: Path | str | None,
) -> list[Episode]:
    from iclr26.core.study import Arm, Study, Unit, run_study
    from iclr26.core.system import RunContext

    def measure(arm: Any, unit: Any, ctx: Any) -> dict[str, Any]:
        episode = run_episode(unit.key, make_env(unit.key), agent, parser, budget)
        return {"success": int(episode.success), "episode": episode.to_json()}

    study = Study(
        "suite",
        [Arm(agent.name, "method")],
        [Unit(t) for t in dict.fromkeys(task_ids)],
        measure,
        metrics=["success"],
        config={"suite": "agents.run_suite"},
    )
    result = run_study(study, RunContext(out_dir=folder), jobs=1, parallel="process")
    episodes = [Episode.from_json(result.cells[(agent.name, t)].metrics["episode"]) for t in task_ids]
    if episodes_file is not None:  # the viewer's file: the episodes of cells it does not hold yet
        have = {(e.agent, e.task_id) for e in read_episodes(episodes_file)}
        missing = {(e.agent, e.task_id): e for e in episodes if (e.agent, e.task_id) not in have}
        write_episodes(episodes_file, list(missing.values()))
    return episodes


class LLMAgent:
    """An agent whose replies come from a `ChatModel`.

    Messages: the system prompt (with the accepted action formats), then the conversation; with
    `history_turns` set, only the last that many observation/reply pairs are kept (ScienceBoard
    keeps 3). `reply_prefix` prefills each reply (an open ```bash fence keeps a small model in the
    action format; a fence it leaves open is closed), `stop` ends it early. An observation's image
    is attached when the model can see images; otherwise the
    observation's text alone is sent (its image is never silently dropped for a vision model).
    """

    def __init__(
        self,
        model: ChatModel,
        system_prompt: str,
        parser: ActionParser,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int | None = None,
        history_turns: int | None = None,
        name: str | None = None,
        reply_prefix: str = "",
        stop: Sequence[str] | None = None,
    ) -> None:
        if history_turns is not None and history_turns < 1:
            raise UserError(f"history_turns must be a positive int or None, got {history_turns!r}")
        self.model = model
        self.system_prompt = f"{system_prompt.rstrip()}\n\n{parser.formats()}"
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.history_turns = history_turns
        self.name = name or f"llm:{model.name}"
        self.reply_prefix = reply_prefix  # the assistant text is prefilled with this (e.g. "```bash\n")
        self.stop = tuple(stop) if stop else None
        self._turns: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def reset(self, task_id: str, instruction: str) -> None:
        """Forget the previous episode."""
        self._turns = []

    def _user(self, obs: Observation) -> dict[str, Any]:
        if obs.image is not None and self.model.supports_images:
            return {"role": "user", "content": [{"type": "text", "text": obs.text}, image_part(obs.image)]}
        return {"role": "user", "content": obs.text}

    def messages(self, obs: Observation) -> list[dict[str, Any]]:
        """The chat messages for the next reply."""
        turns = self._turns[-self.history_turns :] if self.history_turns else self._turns
        convo = [m for pair in turns for m in pair]
        return [{"role": "system", "content": self.system_prompt}, *convo, self._user(obs)]

    def act(self, observation: Observation) -> AgentReply:
        """Ask the model for the next reply."""
        start = time.perf_counter()
        [c] = self.model.chat(
            self.messages(observation),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            stop=self.stop,
            prefix=self.reply_prefix or None,
        )
        text = self.reply_prefix + c.text
        if self.reply_prefix and text.count("```") % 2:  # a prefilled fence the model left open
            text = text.rstrip("\n") + "\n```"
        call = ModelCall(
            c.usage.get("prompt_tokens", 0), c.usage.get("completion_tokens", 0), time.perf_counter() - start
        )
        # history keeps the text only: old screenshots are not resent
        self._turns.append(
            ({"role": "user", "content": observation.text}, {"role": "assistant", "content": text})
        )
        return AgentReply(text, call)
