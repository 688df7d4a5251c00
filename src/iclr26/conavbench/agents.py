"""CoNavBench's agents and the evaluation loop: policies that drive `sim.simulate`, and `evaluate`,
which runs one over episodes under either instruction protocol and returns the metrics.

The paper's agents are `NavPolicy`s, not `iclr26.agents.Agent`s: the simulator asks each robot for
a motor action every tick (`act(view) -> "forward"`), it does not show a text observation and read
back a reply, so they are named for what they are.

- `OraclePolicy`: the reference sub-tasks, each by the shortest path (rendezvous waits in the sim);
- `NullPolicy`: stops at once (the floor);
- `RandomPolicy`: uniform random actions (forward, left, right, stop), seeded per episode;
- `GreedySinglePolicy`: the primary alone does s -> t -> e (the best single-robot policy);
- `CollaborativePlanner`: builds its own two-robot plan for the episode's type A1 / A2 (or the
  cheaper of the two) and hands off at the relay x;
- `LLMPolicy`: a `ChatModel` picks sub-goals (object ids, rooms, or an interaction) one at a time
  from the scene graph as text; the same waypoint follower moves there. Replies are parsed
  strictly; an unknown sub-goal is a failed step (the robot stops where it is).

Protocols (LH-VLN's): `high`, one run of the whole mission; `step`, each navigation sub-task
(`move_to`) run on its own from its reference start (the robot's previous sub-task node, or its
start), heading 0. LH-VLN's step tasks are navigation legs; an interaction trial would start at its
own node and succeed trivially, so interactions are not step trials. The step-level SR is the
success rate over these trials (`metrics.step_level_sr`).

Ground-truth steps (SPL, CGT) are the expert's: the waypoint follower's steps on the sub-task from
its reference start, alone (1 for an interaction: the stop). Each sub-task's step budget is
max(`budget_min`, `budget_factor` x its ground-truth steps). The expert runs with exact actuation
even when `EvalConfig.sim` adds noise (ground truth is the noise-free shortest route).

Noise (`SimConfig.forward_noise`, `turn_noise`): agents steer by the belief the simulator gives
them; each run's noise is seeded by `derive_seed(EvalConfig.seed, episode id)` (a step trial adds
its sub-task index), so evaluations repeat.
"""

from __future__ import annotations

import math
import random
import re
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from iclr26.conavbench.episode import COLLAB_TYPES, Episode, SubTask
from iclr26.conavbench.metrics import SUCCESS_RULES, EpisodeRecord, step_level_sr, summarize
from iclr26.conavbench.scene import Scene
from iclr26.conavbench.sim import (
    FORWARD_STEP,
    HEADINGS,
    TURN_DEGREES,
    RobotView,
    SceneIndex,
    SimConfig,
    SimResult,
    simulate,
)
from iclr26.core.seeding import derive_seed

PROTOCOLS = ("high", "step")
SPEED = 0.5  # m/s: FORWARD_STEP per SimConfig.dt, for a planner's time estimates


class WaypointFollower:
    """Steers one robot to a goal node: through `SceneIndex.waypoints` (the route's nodes, doors
    crossed straight through their approach points), turning toward the next point (to the nearest
    of the 12 headings) and going forward; stops within `stop_radius` of the goal.

    A point counts as passed within `waypoint_radius` (`approach_radius` for a door's approach
    points); after a blocked forward the follower backs up to the previous point and must come
    within `tight_radius` of it before going on.
    """

    def __init__(
        self,
        index: SceneIndex,
        goal: int,
        x: float,
        y: float,
        *,
        waypoint_radius: float = 0.3,
        approach_radius: float = 0.15,
        stop_radius: float = 0.5,
        tight_radius: float = 0.12,
    ) -> None:
        self.goal, self.index = goal, index
        pts = index.waypoints(x, y, goal)
        self.points = [(px, py) for px, py, _ in pts]
        self.radii = [approach_radius if inner else waypoint_radius for _, _, inner in pts]
        self.i = 0
        self.tight = -1
        self.stop_radius, self.tight_radius = stop_radius, tight_radius
        self.last = ""

    def act(self, view: RobotView) -> str:
        """The next action toward the goal ("stop" when there, or when it cannot be reached)."""
        if not self.points:
            return "stop"
        if view.blocked and self.last == "forward" and self.i > 0:
            self.i -= 1
            self.tight = self.i
        last = len(self.points) - 1
        while self.i < last:
            px, py = self.points[self.i]
            r = self.tight_radius if self.i == self.tight else self.radii[self.i]
            if math.hypot(view.x - px, view.y - py) >= r:
                break
            self.i += 1
        gx, gy = self.points[self.i]
        if self.i == last and math.hypot(view.x - gx, view.y - gy) < self.stop_radius:
            self.last = "stop"
            return "stop"
        self.last = steer(view, gx, gy, self.index)
        return self.last


def steer(view: RobotView, gx: float, gy: float, index: SceneIndex | None = None) -> str:
    """Forward when the best heading to (gx, gy) is the robot's, else the shorter turn toward it.

    The best heading is the nearest of the 12 to the bearing; with `index`, the nearest whose
    forward step stays walkable (within 60 degrees of the bearing), so that the robot slides along
    a wall instead of pushing into it.
    """
    bearing = math.degrees(math.atan2(gy - view.y, gx - view.x))
    k = round(bearing / TURN_DEGREES) % HEADINGS
    if index is not None:
        off = (bearing - k * TURN_DEGREES + 180) % 360 - 180  # where the bearing lies from k
        side = 1 if off >= 0 else -1
        for dk in (0, side, -side, 2 * side, -2 * side):
            h = (k + dk) % HEADINGS
            if index.walkable(view.x + FORWARD_STEP * _COS[h], view.y + FORWARD_STEP * _SIN[h]):
                k = h
                break
    diff = (k - view.heading) % HEADINGS
    if diff == 0:
        return "forward"
    return "left" if diff <= HEADINGS // 2 else "right"


_COS = [math.cos(math.radians(h * TURN_DEGREES)) for h in range(HEADINGS)]
_SIN = [math.sin(math.radians(h * TURN_DEGREES)) for h in range(HEADINGS)]


class NavPolicy:
    """A policy over whole episodes: `plan` gives the sub-tasks to run (all robots, schedule order);
    the simulator then calls `begin` once per run and `act` per robot per tick. The base class
    follows each sub-task's node with a `WaypointFollower`."""

    name = "agent"

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """The reference sub-tasks (`episode.subtasks`)."""
        self.episode, self.protocol = episode, protocol
        return episode.subtasks

    def begin(
        self, index: SceneIndex, plan: Sequence[SubTask], starts: Mapping[str, tuple[float, float]]
    ) -> None:
        """Reset the per-run state."""
        self.index = index
        self._followers: dict[str, tuple[int, WaypointFollower]] = {}

    def goal(self, view: RobotView) -> int | None:
        """The node to go to for this stage (None: stop where it is)."""
        return view.subtask.node

    def act(self, view: RobotView) -> str:
        """Follow the stage's goal; a new follower when the stage changes."""
        held = self._followers.get(view.robot)
        if held is None or held[0] != view.stage:
            goal = self.goal(view)
            if goal is None:
                return "stop"
            held = (view.stage, WaypointFollower(self.index, goal, view.x, view.y))
            self._followers[view.robot] = held
        return held[1].act(view)


class OraclePolicy(NavPolicy):
    """The reference plan by shortest paths; the simulator makes the first robot at x wait.

    The reference schedule's own waits (`Visit`s with depart > arrive away from x) are not
    replayed: the simulator's clock differs from the generator's travel-time model.
    """

    name = "oracle"


class NullPolicy(NavPolicy):
    """Stops at once in every sub-task (a floor: it succeeds only where a sub-task starts within
    the success radius)."""

    name = "null"

    def act(self, view: RobotView) -> str:
        """Always "stop"."""
        return "stop"


class RandomPolicy(NavPolicy):
    """Uniform random actions over forward / left / right / stop, seeded by (seed, episode id)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """The reference sub-tasks; seeds this episode's generator."""
        self.rng = random.Random(zlib.crc32(f"{self.seed}:{episode.id}".encode()))
        return super().plan(episode, index, protocol)

    def act(self, view: RobotView) -> str:
        """A uniformly random action."""
        return self.rng.choice(("forward", "left", "right", "stop"))


def _subtask(index: SceneIndex, robot: str, action: str, object_id: str) -> SubTask:
    """A sub-task at an object's anchor node, its text in LH-VLN's form."""
    obj = index.scene.object(object_id)
    region = index.scene.graph.nodes[obj.node].get("region") or ""
    verb = action.capitalize()
    return SubTask(robot, action, obj.node, object_id, region, f"{verb}('{obj.name}_{region}')")


def solo_plan(index: SceneIndex, episode: Episode, robot: str = "primary") -> tuple[SubTask, ...]:
    """One robot moves the object alone: move_to(t), pick, move_to(e), place."""
    t, e = episode.target, episode.end
    return tuple(
        _subtask(index, robot, a, o) for a, o in (("move_to", t), ("pick", t), ("move_to", e), ("place", e))
    )


def collaborative_plan(index: SceneIndex, episode: Episode, collab_type: str) -> tuple[SubTask, ...]:
    """A1 (the helper fetches) or A2 (the primary fetches) with the handoff at the relay, in
    schedule order: sorted by estimated finish time at `SPEED`, the rendezvous at the later arrival."""
    if collab_type not in COLLAB_TYPES:
        raise ValueError(
            f"collab_type must be one of {COLLAB_TYPES}, got {collab_type!r} (episode {episode.id})"
        )
    if episode.relay is None or "helper" not in episode.starts:
        raise ValueError(
            f"episode {episode.id} has no relay or no helper start; it cannot be run collaboratively"
        )
    fetcher, deliverer = ("helper", "primary") if collab_type == "A1" else ("primary", "helper")
    t, x, e = episode.target, episode.relay, episode.end
    legs = {
        fetcher: [("move_to", t), ("pick", t), ("move_to", x), ("handoff", x)],
        deliverer: [("move_to", x), ("receive", x), ("move_to", e), ("place", e)],
    }
    rank = {"primary": 0, "helper": 1}
    keyed = []
    times: dict[str, list[float]] = {}
    for r, steps in legs.items():
        node, clock, times[r] = episode.starts[r], 0.0, []
        for _a, o in steps:
            target = index.scene.object(o).node
            clock += _graph_distance(index, node, target) / SPEED
            node = target
            times[r].append(clock)
    meet = max(times[fetcher][2], times[deliverer][0])  # the first at x waits for the other
    times[fetcher][3] = meet
    shift = meet - times[deliverer][0]
    times[deliverer][1:] = [tj + shift for tj in times[deliverer][1:]]
    for r, steps in legs.items():
        for j, (a, o) in enumerate(steps):
            keyed.append(((times[r][j], a == "receive", rank[r], j), _subtask(index, r, a, o)))
    return tuple(sub for _, sub in sorted(keyed, key=lambda kv: kv[0]))


def _graph_distance(index: SceneIndex, a: int, b: int) -> float:
    return index.tree(b)[1].get(a, math.inf)


class GreedySinglePolicy(NavPolicy):
    """The primary does the whole mission alone (s -> t -> e); the helper stays at its start."""

    name = "greedy-single"

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """`solo_plan` for the primary."""
        self.episode, self.protocol = episode, protocol
        return solo_plan(index, episode)


class CollaborativePlanner(NavPolicy):
    """Allocates by collaboration type and hands off at the relay x; single episodes run solo.

    `allocate="episode"` uses the episode's type; `"cheaper"` the type with the smaller primary
    journey (J_A1 = d(s, x) + d(x, e), J_A2 = d(s, t) + d(t, x)).
    """

    name = "collaborative"

    def __init__(self, allocate: str = "episode") -> None:
        if allocate not in ("episode", "cheaper"):
            raise ValueError(f"allocate must be 'episode' or 'cheaper', got {allocate!r}")
        self.allocate = allocate

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """`collaborative_plan` for the chosen type, or `solo_plan` for a single episode."""
        self.episode, self.protocol = episode, protocol
        if episode.kind == "single" or episode.relay is None:
            return solo_plan(index, episode)
        kind = episode.collab_type
        if self.allocate == "cheaper":
            s = episode.starts["primary"]
            t, x, e = (index.scene.object(o).node for o in (episode.target, episode.relay, episode.end))
            j_a1 = _graph_distance(index, s, x) + _graph_distance(index, x, e)
            j_a2 = _graph_distance(index, s, t) + _graph_distance(index, t, x)
            kind = "A1" if j_a1 <= j_a2 else "A2"
        return collaborative_plan(index, episode, kind or "A1")


def scene_text(scene: Scene) -> str:
    """The scene graph as text: rooms and their regions, which rooms connect, and the objects."""
    lines = ["Rooms:"]
    lines += [f"  room {r.id}: {r.type}" for r in scene.rooms]
    lines.append("Connections (doors):")
    lines += [f"  room {d.a} <-> room {d.b}" for d in scene.doors]
    lines.append("Objects:")
    g = scene.graph
    lines += [
        f"  {o.id}: {o.name} in room {o.room} ({g.nodes[o.node].get('region', '')})" for o in scene.objects
    ]
    return "\n".join(lines)


INTERACTIONS = ("pick", "place", "handoff", "receive", "stop")
_ROOM = re.compile(r"room (\d+)")


class LLMPolicy(NavPolicy):
    """A language model picks each stage's sub-goal; a `WaypointFollower` takes the robot there.

    Per robot and stage the model gets the scene as text and the instruction (`high`) or the
    sub-task's text (`step`), with the sub-goals chosen so far, and must reply with exactly one of:
    an object id, "room <n>", or an interaction word (act where the robot is). Anything else is an
    invalid reply, counted in `invalid`, and the robot stops where it is.
    """

    name = "llm"

    def __init__(self, model: object, *, max_tokens: int = 16) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.invalid = 0
        self.calls = 0

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """The reference sub-tasks (the stages the simulator judges); the history is cleared."""
        self.history: dict[str, list[str]] = {}
        self._text = scene_text(index.scene)
        self._rooms = _room_nodes(index)
        return super().plan(episode, index, protocol)

    def parse(self, reply: str) -> int | str | None:
        """A node to go to, "here" for an interaction, or None for an invalid reply (never eval'ed)."""
        word = reply.strip().strip("`'\"").strip()
        if word.lower() in INTERACTIONS:
            return "here"
        ids = {o.id: o.node for o in self.index.scene.objects}
        if word in ids:
            return ids[word]
        m = _ROOM.fullmatch(word.lower())
        if m and int(m.group(1)) in self._rooms:
            return self._rooms[int(m.group(1))]
        return None

    def goal(self, view: RobotView) -> int | None:
        """Ask the model for this stage's sub-goal."""
        task = (
            f"Mission: {self.episode.instruction}"
            if self.protocol == "high"
            else f"Current step: {view.subtask.text}"
        )
        done = ", ".join(self.history.get(view.robot, [])) or "none"
        messages = [
            {
                "role": "system",
                "content": "You plan sub-goals for a household robot. Reply with one sub-goal only.",
            },
            {
                "role": "user",
                "content": (
                    f"{self._text}\n\n{task}\nYou control the {view.robot} robot. Sub-goals so far: {done}.\n"
                    "Reply with exactly one of: an object id (e.g. obj_3), 'room <n>', or one of "
                    "pick, place, handoff, receive (to act where you are)."
                ),
            },
        ]
        self.calls += 1
        reply = self.model.chat(messages, temperature=0.0, max_tokens=self.max_tokens)[0].text
        self.history.setdefault(view.robot, []).append(reply.strip()[:40])
        choice = self.parse(reply)
        if choice is None:
            self.invalid += 1
            return None
        return None if choice == "here" else int(choice)


def _room_nodes(index: SceneIndex) -> dict[int, int]:
    """Each room's node nearest its centre (a room sub-goal)."""
    out = {}
    for r in index.scene.rooms:
        cx, cy = (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2
        nodes = [n for n in index.room_nodes[r.id] if not index.scene.graph.nodes[n].get("door")]
        if nodes:
            out[r.id] = min(nodes, key=lambda n: (math.hypot(index.pos[n][0] - cx, index.pos[n][1] - cy), n))
    return out


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation settings."""

    budget_factor: float = 3.0
    """a sub-task's step budget is this times the expert's steps ..."""
    budget_min: int = 20
    """... but at least this many steps"""
    success_rule: str = "delivered"
    """when an episode succeeds: delivered (the object reaches e) or all (every sub-task, LH-VLN's)"""
    sim: SimConfig = field(default_factory=SimConfig)
    """the simulator and its actuation noise"""
    seed: int = 0
    """seeds the actuation noise: derive_seed(seed, episode id[, the trial's sub-task index])"""

    def __post_init__(self) -> None:
        if self.success_rule not in SUCCESS_RULES:
            raise ValueError(
                f"EvalConfig.success_rule must be one of {SUCCESS_RULES}, got {self.success_rule!r}"
            )
        if self.budget_factor <= 0 or self.budget_min < 1:
            raise ValueError(
                f"EvalConfig.budget_factor must be > 0 and budget_min >= 1, got {self.budget_factor} and "
                f"{self.budget_min}"
            )
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"EvalConfig.seed must be a non-negative int, got {self.seed!r}")


@dataclass
class Evaluation:
    """An agent's metrics on episodes under one protocol, the per-episode (or per-trial) records,
    and the wall time; `runs` holds the `SimResult`s when asked for (`keep_runs=True`)."""

    agent: str
    protocol: str
    metrics: dict[str, float]
    records: list[EpisodeRecord]
    seconds: float
    runs: list[SimResult] = field(default_factory=list)


def index_scenes(scenes: Mapping[str, Scene | SceneIndex] | Sequence[Scene]) -> dict[str, SceneIndex]:
    """`SceneIndex`es by scene id (pass the result to several `evaluate` calls to share caches)."""
    items = scenes.values() if isinstance(scenes, Mapping) else scenes
    return {
        s.scene.id if isinstance(s, SceneIndex) else s.id: s if isinstance(s, SceneIndex) else SceneIndex(s)
        for s in items
    }


def reference_starts(plan: Sequence[SubTask], starts: Mapping[str, int]) -> list[int]:
    """Each sub-task's reference start node: its robot's previous sub-task node, or the robot's start."""
    at = dict(starts)
    out = []
    for s in plan:
        out.append(at[s.robot])
        at[s.robot] = s.node
    return out


_EXPERT = OraclePolicy()


def expert_steps(index: SceneIndex, start: int, goal: int, config: SimConfig) -> int:
    """The expert's steps from node `start` to `goal`, the stop included (cached on the index), with
    exact actuation whatever `config`'s noise."""
    cache: dict[tuple[int, int], int] = index.__dict__.setdefault("_expert", {})
    if (start, goal) not in cache:
        config = replace(config, forward_noise=0.0, turn_noise=0.0)
        if start == goal:
            cache[start, goal] = 1
        else:
            sub = SubTask("primary", "move_to", goal, "", "", "")
            run = simulate(
                index,
                [sub],
                {"primary": index.pos[start]},
                _EXPERT,
                budgets=10_000,
                standalone=True,
                config=config,
            )
            cache[start, goal] = run.subtasks[0].steps
    return cache[start, goal]


def evaluate(
    episodes: Sequence[Episode],
    scenes: Mapping[str, Scene | SceneIndex] | Sequence[Scene],
    agent: NavPolicy,
    *,
    protocol: str = "high",
    config: EvalConfig | None = None,
    keep_runs: bool = False,
) -> Evaluation:
    """Run `agent` on every episode under `protocol` ("high" or "step") and compute the metrics
    (`metrics.summarize`; the step protocol adds `step_sr` with its interval)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    cfg = config or EvalConfig()
    indices = index_scenes(scenes)
    records: list[EpisodeRecord] = []
    runs: list[SimResult] = []
    t0 = time.perf_counter()
    for ep in episodes:
        if ep.scene not in indices:
            raise ValueError(
                f"episode {ep.id} is in scene {ep.scene!r}, not among the {len(indices)} scenes given"
            )
        index = indices[ep.scene]
        plan = agent.plan(ep, index, protocol)
        ref = reference_starts(plan, ep.starts)
        gt = [expert_steps(index, a, s.node, cfg.sim) for a, s in zip(ref, plan, strict=True)]
        budgets = [max(cfg.budget_min, math.ceil(cfg.budget_factor * g)) for g in gt]
        finals = [j for j, s in enumerate(plan) if s.action == "place"]
        if protocol == "high":
            starts = {r: index.pos[n] for r, n in ep.starts.items()}
            seed = derive_seed(cfg.seed, ep.id)
            run = simulate(index, plan, starts, agent, budgets=budgets, config=cfg.sim, seed=seed)
            records.append(_record(ep, run, gt, finals[-1] if finals else len(plan) - 1))
            if keep_runs:
                runs.append(run)
            continue
        for j, sub in enumerate(plan):
            if sub.action != "move_to":
                continue  # an interaction trial would start at its own node
            starts = {sub.robot: index.pos[ref[j]]}
            seed = derive_seed(cfg.seed, ep.id, j)
            run = simulate(
                index, [sub], starts, agent, budgets=[budgets[j]], standalone=True, config=cfg.sim, seed=seed
            )
            records.append(_record(ep, run, [gt[j]], 0))
            if keep_runs:
                runs.append(run)
    seconds = time.perf_counter() - t0
    metrics = protocol_metrics(records, protocol, success_rule=cfg.success_rule)
    metrics["seconds_per_episode"] = seconds / len(episodes) if episodes else 0.0
    return Evaluation(agent.name, protocol, metrics, records, seconds, runs)


def protocol_metrics(
    records: Sequence[EpisodeRecord], protocol: str, *, success_rule: str
) -> dict[str, float]:
    """`metrics.summarize` of `records`, plus the step-level SR when they are step-protocol trials.
    Each record depends only on its episode (noise is seeded per episode), so the metrics of a
    subset of episodes are those of the matching records of a larger run."""
    metrics = summarize(records, success_rule=success_rule)
    if protocol == "step":
        metrics["step_sr"], metrics["step_sr_lo"], metrics["step_sr_hi"] = step_level_sr(records)
    return metrics


def _record(ep: Episode, run: SimResult, gt: Sequence[int], final: int) -> EpisodeRecord:
    subs = run.subtasks
    return EpisodeRecord(
        episode=ep.id,
        kind=ep.kind,
        collab_type=ep.collab_type,
        subtask_successes=tuple(s.success for s in subs),
        subtask_oracle_successes=tuple(s.oracle_success for s in subs),
        subtask_steps=tuple(s.steps for s in subs),
        subtask_gt_steps=tuple(gt),
        subtask_nav_errors=tuple(s.nav_error for s in subs),
        subtask_gt_lengths=tuple(s.gt_length for s in subs),
        final=final,
        makespan=run.makespan,
        interference=run.interference,
        repairs=ep.repairs,
        wait_time=sum(tr.wait_time for tr in run.traces.values()),
    )
