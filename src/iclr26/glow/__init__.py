"""GLoW ("Dual-Scale World Models for LLM Agents Towards Hard-Exploration Problems", ICLR 2026, arXiv
2509.24116): LLM agents on text games with a global frontier of the best trajectories (W_global) and
multi-path advantage reflection between rollouts (W_local), against ReAct, Reflexion, Go-Explore and
a DRRN.

Public API:
- games: `GameSpec`, `suite`, `make_game` (TextWorld games generated offline and cached);
- environment: `TextGame` (Jericho: score, `get_state` / `set_state`, world hash; TextWorld's
  admissible commands; an env-step budget no agent can exceed), `BudgetExhausted`;
- memory: `Frontier` (top-k trajectories by v(τ)), `Archive` (novelty-tested cells);
- agents: `GLoWPlayer` (`GLoWConfig` with the ablation switches), `ReActPlayer`, `ReflexionPlayer`;
  baselines `random_agent`, `go_explore`, `train_drrn`; the suite's oracle and null agent and the
  no-op floor through `iclr26.agents.run_episode` (`reference`);
- `SYSTEM` for `iclr26 run glow`.
"""

from iclr26.core.system import system_attributes
from iclr26.glow.agents import GLoWConfig, GLoWPlayer, ReActPlayer, ReflexionPlayer, RunResult
from iclr26.glow.drrn import DRRNConfig, train_drrn
from iclr26.glow.env import BudgetExhausted, GameState, TextGame
from iclr26.glow.explore import go_explore, random_agent
from iclr26.glow.games import GameSpec, make_game, suite
from iclr26.glow.memory import Archive, Frontier

__all__ = [
    "Archive",
    "BudgetExhausted",
    "DRRNConfig",
    "Frontier",
    "GLoWConfig",
    "GLoWPlayer",
    "GameSpec",
    "GameState",
    "ReActPlayer",
    "ReflexionPlayer",
    "RunResult",
    "TextGame",
    "go_explore",
    "make_game",
    "random_agent",
    "suite",
    "train_drrn",
]

__getattr__ = system_attributes(__name__)
