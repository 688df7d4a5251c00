"""A learned executor: a small policy behaviour-cloned from the waypoint follower on the training
split's legs, the CPU stand-in for the paper's fine-tuned navigation policy.

Observation (`observe`), from what the robot believes (dead reckoning; see `sim`):
- local occupancy: a `grid` x `grid` egocentric patch of the floor plan around the believed pose,
  `cell` metres a cell, rotated with the believed heading (1 walkable, 0 not);
- goal direction: the bearing (sin, cos, relative to the heading, and one-hot in turns of 30 degrees)
  and distance of the next point of the shortest route to the goal (the route's look-ahead point,
  `lookahead` metres or more away),
  the bearing and straight-line distance of the goal itself, the route distance to it, and whether
  the last forward was blocked.

Actions: forward, left, right, stop (the paper's action space). The policy is an MLP
(`hidden` units, two layers) trained by cross-entropy on the expert's actions (behaviour cloning),
optionally with DAgger rounds (`dagger`): the learner drives, and every state it visits is labelled
with the action a fresh follower from that belief would take.

Which legs it learns from is the experiment (`learned.py`): one executor from single-robot
episodes' legs (NavCraft-S), one from collaborative episodes' legs (NavCraft-C), with the same
number of (observation, action) pairs and gradient steps.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from iclr26.conavbench.agents import NavPolicy, WaypointFollower, reference_starts
from iclr26.conavbench.episode import Episode, SubTask
from iclr26.conavbench.sim import HEADINGS, TURN_DEGREES, RobotView, SceneIndex, SimConfig, simulate
from iclr26.core.config import ConfigError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int

ACTIONS = ("forward", "left", "right", "stop")
"""The executor's action space (the paper's; `wait` is the simulator's, not a navigation action)."""


@dataclass(frozen=True)
class ExecutorConfig:
    """The learned executor: observation, network and behaviour-cloning budget."""

    grid: int = 7
    """cells per side of the egocentric occupancy patch"""
    cell: float = 0.3
    """metres per occupancy cell"""
    lookahead: float = 0.4
    """metres: the route point steered to is the first at least this far away"""
    hidden: int = 64
    """units in each of the MLP's two hidden layers"""
    samples: int = 20_000
    """(observation, action) pairs each executor learns from (the same for every training set)"""
    steps: int = 3000
    """gradient steps of behaviour cloning"""
    batch: int = 256
    """examples per gradient step"""
    lr: float = 3e-3
    """Adam learning rate"""
    dagger: int = 0
    """DAgger rounds after the first cloning (each adds `samples` // 2 learner-visited states)"""

    def __post_init__(self) -> None:
        check_int("executor.grid", self.grid, 3, 31)
        check_int("executor.hidden", self.hidden, 4, 4096)
        check_int("executor.samples", self.samples, 100)
        check_int("executor.steps", self.steps, 1)
        check_int("executor.batch", self.batch, 1)
        check_int("executor.dagger", self.dagger, 0, 10)
        for name in ("cell", "lookahead", "lr"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise ConfigError(f"executor.{name} must be a positive number, got {v!r}")

    @property
    def n_features(self) -> int:
        """Length of an observation vector."""
        return self.grid * self.grid + 9 + HEADINGS


def _rect_array(index: SceneIndex) -> np.ndarray:
    """The walkable rectangles as an (R, 4) array, cached on the index."""
    cached = index.__dict__.get("_rect_array")
    if cached is None:
        cached = index.__dict__["_rect_array"] = np.asarray(index.rects, dtype=np.float64)
    return cached


@functools.cache
def _offsets(cfg: ExecutorConfig) -> tuple[np.ndarray, np.ndarray]:
    k = (np.arange(cfg.grid) - (cfg.grid - 1) / 2) * cfg.cell
    fwd, side = np.meshgrid(k, k, indexing="ij")
    return fwd.ravel(), side.ravel()


def observe(index: SceneIndex, view: RobotView, goal: int, cfg: ExecutorConfig) -> np.ndarray:
    """The executor's observation of `view` (a believed pose) heading for node `goal`."""
    a = math.radians(view.heading * TURN_DEGREES)
    c, s = math.cos(a), math.sin(a)
    fwd, side = _offsets(cfg)
    px = view.x + fwd * c - side * s
    py = view.y + fwd * s + side * c
    r = _rect_array(index)
    inside = (
        (px[:, None] >= r[None, :, 0])
        & (px[:, None] <= r[None, :, 2])
        & (py[:, None] >= r[None, :, 1])
        & (py[:, None] <= r[None, :, 3])
    )
    occupancy = inside.any(axis=1).astype(np.float64)
    gx, gy = index.pos[goal]
    points = index.waypoints(view.x, view.y, goal)
    lx, ly = gx, gy
    for qx, qy, _ in points:
        if math.hypot(qx - view.x, qy - view.y) >= cfg.lookahead:
            lx, ly = qx, qy
            break
    route = index.geodesic(view.x, view.y, goal)
    route = 10.0 if not math.isfinite(route) else min(route, 10.0)

    def bearing(tx: float, ty: float) -> tuple[float, float, float]:
        d = math.hypot(tx - view.x, ty - view.y)
        rel = math.atan2(ty - view.y, tx - view.x) - a
        return math.sin(rel), math.cos(rel), d

    ls, lc, ld = bearing(lx, ly)
    gs, gc, gd = bearing(gx, gy)
    extra = [ls, lc, min(ld, 2.0) / 2.0, gs, gc, min(gd, 10.0) / 10.0, route / 10.0, float(route < 0.5),
             float(view.blocked)]  # fmt: skip
    turn = np.zeros(HEADINGS)  # the look-ahead's bearing, in turns of 30 degrees from the heading
    turn[round(math.degrees(math.atan2(ls, lc)) / TURN_DEGREES) % HEADINGS] = 1.0
    return np.concatenate([occupancy, np.asarray(extra), turn])


class MLP(torch.nn.Module):
    """Observation -> action logits: two hidden ReLU layers."""

    def __init__(self, n_in: int, hidden: int) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(n_in, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, len(ACTIONS)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits over `ACTIONS`."""
        return self.net(x)


def init_weights(cfg: ExecutorConfig, seed: int) -> dict[str, np.ndarray]:
    """A freshly initialised network's weights (the untrained floor's), seeded."""
    torch.manual_seed(seed)
    return _weights(MLP(cfg.n_features, cfg.hidden))


def _weights(model: MLP) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(np.float64) for k, v in model.state_dict().items()}


class LearnedExecutor(NavPolicy):
    """Follows each sub-task's node with the learned network (greedy action, no search)."""

    name = "learned"

    def __init__(self, weights: Mapping[str, np.ndarray], cfg: ExecutorConfig, name: str = "learned") -> None:
        self.cfg, self.name = cfg, name
        self.layers = [(weights[f"net.{i}.weight"], weights[f"net.{i}.bias"]) for i in (0, 2, 4)]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The network's logits for one observation (NumPy: one forward pass per tick)."""
        h = obs
        for k, (w, b) in enumerate(self.layers):
            h = w @ h + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h

    def choose(self, obs: np.ndarray) -> str:
        """The arg-max action for an observation."""
        return ACTIONS[int(np.argmax(self.logits(obs)))]

    def act(self, view: RobotView) -> str:
        """The arg-max action for the current sub-task's node."""
        return self.choose(observe(self.index, view, view.subtask.node, self.cfg))


@dataclass(frozen=True)
class Leg:
    """One navigation leg: a `move_to` from a start node to a goal node in a scene."""

    scene: str
    start: int
    goal: int
    episode: str
    j: int  # the sub-task's index in its plan

    def subtask(self) -> SubTask:
        """The leg as a one-sub-task plan's sub-task."""
        return SubTask("primary", "move_to", self.goal, "", "", "")


def legs_of(episode: Episode, plan: Sequence[SubTask] | None = None) -> list[Leg]:
    """The `move_to` legs of `plan` (default: the episode's reference sub-tasks) from their
    reference starts (the robot's previous sub-task node, or its start)."""
    plan = episode.subtasks if plan is None else plan
    starts = reference_starts(plan, episode.starts)
    return [
        Leg(episode.scene, a, s.node, episode.id, j)
        for j, (a, s) in enumerate(zip(starts, plan, strict=True))
        if s.action == "move_to" and a != s.node
    ]


class _Recorder(NavPolicy):
    """Drives with `driver` (the follower, or the learner for DAgger) and records each state with the
    expert's label: the follower's own action, or a fresh follower's from the belief (DAgger)."""

    def __init__(self, cfg: ExecutorConfig, driver: LearnedExecutor | None = None) -> None:
        self.cfg, self.driver = cfg, driver
        self.obs: list[np.ndarray] = []
        self.labels: list[int] = []

    def begin(self, index, plan, starts) -> None:
        """Reset the follower (and the learner)."""
        super().begin(index, plan, starts)
        if self.driver is not None:
            self.driver.begin(index, plan, starts)

    def act(self, view: RobotView) -> str:
        """Record (observation, expert action); return the driver's action."""
        goal = view.subtask.node
        self.obs.append(observe(self.index, view, goal, self.cfg))
        if self.driver is None:
            action = super().act(view)
            self.labels.append(ACTIONS.index(action))
            return action
        expert = WaypointFollower(self.index, goal, view.x, view.y).act(view)
        self.labels.append(ACTIONS.index(expert))
        return self.driver.choose(self.obs[-1])


def collect(
    legs: Sequence[Leg],
    indices: Mapping[str, SceneIndex],
    cfg: ExecutorConfig,
    sim: SimConfig,
    n: int,
    seed: int,
    driver: LearnedExecutor | None = None,
    budget: int = 400,
) -> tuple[np.ndarray, np.ndarray]:
    """Up to `n` (observation, expert action) pairs from runs on `legs` in a seeded order, under the
    simulator's noise (each run seeded by the leg), driven by the follower or by `driver`."""
    order = np.random.default_rng(derive_seed(seed, "legs")).permutation(len(legs))
    rec = _Recorder(cfg, driver)
    for i in order:
        leg = legs[int(i)]
        index = indices[leg.scene]
        simulate(index, [leg.subtask()], {"primary": index.pos[leg.start]}, rec, budgets=budget,
                 standalone=True, config=sim, seed=derive_seed(seed, "demo", leg.episode, leg.j))  # fmt: skip
        if len(rec.labels) >= n:
            break
    return np.asarray(rec.obs[:n]), np.asarray(rec.labels[:n], dtype=np.int64)


def fit(
    x: np.ndarray,
    y: np.ndarray,
    cfg: ExecutorConfig,
    seed: int,
    weights: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, np.ndarray], float]:
    """Behaviour cloning: cross-entropy on (x, y) for `cfg.steps` Adam steps from `weights` (default a
    seeded initialisation); the weights and the final training accuracy."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-unit MLP gains nothing from more, and a shared machine loses much
    try:
        return _fit(x, y, cfg, seed, weights)
    finally:
        torch.set_num_threads(threads)


def _fit(
    x: np.ndarray, y: np.ndarray, cfg: ExecutorConfig, seed: int, weights: Mapping[str, np.ndarray] | None
) -> tuple[dict[str, np.ndarray], float]:
    torch.manual_seed(derive_seed(seed, "init"))
    model = MLP(cfg.n_features, cfg.hidden)
    if weights is not None:
        model.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in weights.items()})
    xt, yt = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(derive_seed(seed, "batches"))
    for _ in range(cfg.steps):
        idx = torch.randint(0, len(xt), (cfg.batch,), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = float((model(xt).argmax(1) == yt).float().mean())
    return _weights(model), acc


def train_executor(
    legs: Sequence[Leg], indices: Mapping[str, SceneIndex], cfg: ExecutorConfig, sim: SimConfig, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Behaviour-clone the follower on `legs` (`cfg.samples` pairs), then `cfg.dagger` DAgger rounds;
    the weights and training statistics (pairs, accuracy)."""
    if not legs:
        raise ValueError("train_executor needs at least one leg")
    x, y = collect(legs, indices, cfg, sim, cfg.samples, derive_seed(seed, "bc"))
    weights, acc = fit(x, y, cfg, seed)
    for r in range(cfg.dagger):
        learner = LearnedExecutor(weights, cfg)
        xd, yd = collect(
            legs, indices, cfg, sim, cfg.samples // 2, derive_seed(seed, "dagger", r), driver=learner
        )
        x, y = np.concatenate([x, xd]), np.concatenate([y, yd])
        weights, acc = fit(x, y, cfg, seed, weights)
    return weights, {"pairs": float(len(y)), "train_accuracy": acc,
                     "stop_share": float((y == ACTIONS.index("stop")).mean())}  # fmt: skip
