"""A continuous 2D two-robot simulator over a `Scene` (CoNavBench's Habitat setting, abstracted).

Each robot is (x, y, heading) with heading a multiple of 30 degrees. Actions (the paper's action
space, plus a wait): `forward` 0.25 m, `left` / `right` 30 degrees, `stop` (ends the current
sub-task: LH-VLN's stop), `wait` (stay; time passes, no step is counted). A forward move that would
leave the walkable area, the rooms' rectangles shrunk by `WALL_CLEARANCE` and the door openings,
is blocked (no move). Robots advance in lock step, one action each per tick of `SimConfig.dt`
seconds (forward at 0.5 m/s and a 30-degree turn both take 0.5 s; so do stop and wait).

Sub-tasks, judged at the stop by the geodesic distance d to the sub-task's node (LH-VLN):
- move_to: success iff d < 1 m;
- pick / place: d < 1 m, and the object is at t (pick) or held by this robot (place);
- handoff / receive: the first robot to stop waits until the partner stops for the other half;
  both succeed iff both are within 1 m of x and the giver holds the object (then the receiver
  does). A waiting robot gives up (fails) when the partner can no longer come.
A sub-task also ends, failed, when it has used its step budget. The oracle success of a sub-task
is d < 1 m at any tick of it. `standalone=True` (the step-by-step protocol's single trials)
assumes every precondition: the object is where the sub-task needs it and the partner is there.

Actuation noise and dead reckoning (the standard model of a robot without GPS; off by default):
each forward moves the TRUE pose FORWARD_STEP x (1 + `forward_noise` x N(0, 1)) along the true
heading, and each turn turns it by 30 + `turn_noise` x N(0, 1) degrees; walls still block the true
move. The robot's BELIEF moves by the commanded amount (0.25 m along its believed heading, one of
the 12; not at all after a blocked forward: the bump is sensed). Policies see only the belief
(`RobotView`); success, the navigation error and interference use the true pose. The belief starts
at the true pose in every run (an episode, or one step-protocol trial) and, with
`relocalise_on_interaction`, is reset to it whenever an interaction (pick, place, handoff, receive)
succeeds: the robot recognises the object, so it knows where it is, and re-aligns its heading to
the nearest of the 12. The error thus grows with the distance driven since the last fix, and long
legs fail more. The noise is drawn per robot from `derive_seed(seed, robot)`; `simulate(seed=...)`.
With both noises 0 the belief is the true pose and runs are exactly the noise-free ones.

Interference: an event each time the two robots come closer than 0.6 m, except when both are
within 1 m of a rendezvous node (the handoff is meant to bring them together).

Geodesic distances from a point: rooms are convex, so from a point p in room R the distance to a
node g is min over R's nodes and doors n of |p - n| + d_graph(n, g) (which is |p - g| when g is in
R). Shortest-path trees towards goals are computed once per goal and cached (`SceneIndex`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import networkx as nx

from iclr26.conavbench.episode import SubTask
from iclr26.conavbench.scene import WALL_CLEARANCE, Scene
from iclr26.core.seeding import derive_seed

FORWARD_STEP = 0.25  # metres per forward action (the paper's action space)
TURN_DEGREES = 30  # degrees per turn action
HEADINGS = 360 // TURN_DEGREES  # 12 discrete headings; heading h points at h * 30 degrees
SUCCESS_RADIUS = 1.0  # metres: stop closer than this to succeed (LH-VLN's success_dis)
INTERFERENCE_RADIUS = 0.6  # metres: robots closer than this interfere
DOOR_OVERLAP = 0.05  # metres a door opening reaches into each room's walkable rectangle
SIM_ACTIONS = ("forward", "left", "right", "stop", "wait")
RENDEZVOUS = {"handoff": "receive", "receive": "handoff"}
INTERACTIONS = ("pick", "place", "handoff", "receive")  # a success relocalises the robot

_COS = [math.cos(math.radians(h * TURN_DEGREES)) for h in range(HEADINGS)]
_SIN = [math.sin(math.radians(h * TURN_DEGREES)) for h in range(HEADINGS)]


@dataclass(frozen=True)
class SimConfig:
    """Simulator settings; defaults are the paper's action space and LH-VLN's success radius."""

    dt: float = 0.5
    """seconds per action (forward 0.25 m at 0.5 m/s; a 30-degree turn)"""
    success_radius: float = SUCCESS_RADIUS
    """metres from the goal within which a stop succeeds (LH-VLN: 1 m)"""
    interference_radius: float = INTERFERENCE_RADIUS
    """metres below which the two robots count an interference event"""
    max_ticks: int = 20_000
    """a hard cap on one run; every open sub-task fails there"""
    forward_noise: float = 0.0
    """s.d. of each forward step's relative length error (0.15: 15%); 0: exact actuation"""
    turn_noise: float = 0.0
    """s.d. in degrees of each 30-degree turn's error; 0: exact actuation"""
    relocalise_on_interaction: bool = True
    """a successful pick/place/handoff/receive resets the robot's belief to its true pose"""

    @property
    def noisy(self) -> bool:
        """Whether actuation is noisy (the belief can leave the true pose)."""
        return self.forward_noise > 0 or self.turn_noise > 0

    def __post_init__(self) -> None:
        if self.dt <= 0:
            raise ValueError(f"SimConfig.dt must be > 0 seconds, got {self.dt}")
        if self.success_radius <= 0 or self.interference_radius < 0:
            raise ValueError(
                f"SimConfig.success_radius must be > 0 and interference_radius >= 0, got "
                f"{self.success_radius} and {self.interference_radius}"
            )
        if self.forward_noise < 0 or self.turn_noise < 0:
            raise ValueError(
                f"SimConfig.forward_noise and turn_noise must be >= 0 (0 = exact actuation), got "
                f"{self.forward_noise} and {self.turn_noise}"
            )


class SceneIndex:
    """A scene's precomputed geometry: walkable rectangles, per-room candidate nodes, and cached
    shortest-path trees towards goal nodes."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        g = scene.graph
        self.pos: dict[int, tuple[float, float]] = {n: tuple(g.nodes[n]["pos"]) for n in g.nodes}
        c = WALL_CLEARANCE
        self.room_rects = {r.id: (r.x0, r.y0, r.x1, r.y1) for r in scene.rooms}
        shrunk = {r.id: (r.x0 + c, r.y0 + c, r.x1 - c, r.y1 - c) for r in scene.rooms}
        self.rects: list[tuple[float, float, float, float]] = list(shrunk.values())
        self.n_room_rects = len(self.rects)
        self.door_rects: dict[int, tuple[float, float, float, float]] = {}
        room_nodes: dict[int, set[int]] = {r.id: set() for r in scene.rooms}
        for n in g.nodes:
            room = g.nodes[n].get("room")
            if room in room_nodes:
                room_nodes[room].add(n)
        self.door_inner: dict[int, dict[int, tuple[float, float]]] = {}
        for d in scene.doors:
            self.door_rects[d.node] = _door_rect(d.pos, d.width, shrunk[d.a], shrunk[d.b])
            self.rects.append(self.door_rects[d.node])
            self.door_inner[d.node] = {r: _inner_point(self.pos[d.node], shrunk[r]) for r in (d.a, d.b)}
            for r in (d.a, d.b):
                room_nodes[r].add(d.node)
        self.room_nodes = {r: sorted(ns) for r, ns in room_nodes.items()}
        self._trees: dict[int, tuple[dict[int, int], dict[int, float]]] = {}

    def walkable(self, x: float, y: float) -> bool:
        """Whether (x, y) lies in a shrunk room rectangle or a door opening."""
        return any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in self.rects)

    def rooms_at(self, x: float, y: float) -> list[int]:
        """The rooms whose (unshrunk) rectangle holds (x, y); two on a shared wall."""
        eps = 1e-9
        return [
            r
            for r, (x0, y0, x1, y1) in self.room_rects.items()
            if x0 - eps <= x <= x1 + eps and y0 - eps <= y <= y1 + eps
        ]

    def tree(self, goal: int) -> tuple[dict[int, int], dict[int, float]]:
        """(next hop towards `goal`, graph distance to `goal`) for every node that reaches it."""
        if goal not in self._trees:
            pred, dist = nx.dijkstra_predecessor_and_distance(self.scene.graph, goal, weight="length")
            hop = {n: ps[0] for n, ps in pred.items() if ps}
            self._trees[goal] = hop, {n: float(v) for n, v in dist.items()}
        return self._trees[goal]

    def _candidates(self, x: float, y: float) -> list[int]:
        rooms = self.rooms_at(x, y)
        if not rooms:
            return list(self.pos)
        return sorted({n for r in rooms for n in self.room_nodes[r]})

    def entry(self, x: float, y: float, goal: int) -> tuple[int | None, float]:
        """The node through which (x, y) best reaches `goal` and the geodesic distance (inf, None
        when unreachable)."""
        _, dist = self.tree(goal)
        best, best_d = None, math.inf
        for n in self._candidates(x, y):
            if n in dist:
                px, py = self.pos[n]
                d = math.hypot(x - px, y - py) + dist[n]
                if d < best_d:
                    best, best_d = n, d
        return best, best_d

    def geodesic(self, x: float, y: float, goal: int) -> float:
        """The walkable distance in metres from the point (x, y) to node `goal`."""
        gx, gy = self.pos[goal]
        if goal in self._candidates(x, y):
            return math.hypot(x - gx, y - gy)  # same room: a straight line (rooms are convex)
        return self.entry(x, y, goal)[1]

    def node_rooms(self, n: int) -> set[int]:
        """The rooms a node belongs to: its room, or a door's two rooms."""
        if n in self.door_inner:
            return set(self.door_inner[n])
        room = self.scene.graph.nodes[n].get("room")
        return {room} if room is not None else set()

    def waypoints(self, x: float, y: float, goal: int) -> list[tuple[float, float, bool]]:
        """The points to steer through from (x, y) to `goal`: the route's nodes, each door flanked by
        its approach points in the rooms before and after it; (x, y, is-an-approach-point)."""
        route = self.route(x, y, goal)
        here = set(self.rooms_at(x, y))
        out: list[tuple[float, float, bool]] = []
        px, py = x, y
        in_room = any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in self.rects[: self.n_room_rects])
        if route and not in_room:  # in a door opening: first step straight into the room ahead
            door = next(
                (d for d, (x0, y0, x1, y1) in self.door_rects.items() if x0 <= x <= x1 and y0 <= y <= y1),
                None,
            )
            ahead = sorted(set(self.door_inner.get(door, {})) & self.node_rooms(route[0]))
            if door is not None and door != route[0] and ahead:
                out.append((*self.door_inner[door][ahead[0]], True))
                here = {ahead[0]}
        for k, n in enumerate(route):
            nx_, ny_ = self.pos[n]
            if n not in self.door_inner:
                out.append((nx_, ny_, False))
                here, px, py = self.node_rooms(n), nx_, ny_
                continue
            inner = self.door_inner[n]
            after = self.node_rooms(route[k + 1]) if k + 1 < len(route) else set()
            come = sorted(r for r in inner if r in here and r not in after)
            if come and math.hypot(px - nx_, py - ny_) > WALL_CLEARANCE:
                out.append((*inner[come[0]], True))
            out.append((nx_, ny_, False))
            go = sorted(r for r in inner if r in after and r not in come) or sorted(
                r for r in inner if r in after
            )
            if go and k + 1 < len(route):
                out.append((*inner[go[0]], True))
            here, px, py = (set(go) if go else set(inner)), nx_, ny_
        return out

    def route(self, x: float, y: float, goal: int) -> list[int]:
        """The node path from (x, y) to `goal`: the entry node, then the shortest path ([] if none)."""
        n, _ = self.entry(x, y, goal)
        if n is None:
            return []
        hop, _ = self.tree(goal)
        out = [n]
        while out[-1] != goal:
            out.append(hop[out[-1]])
        return out


def _inner_point(p: tuple[float, float], rect: tuple[float, float, float, float]) -> tuple[float, float]:
    """A door's approach point in one room: the door clamped into the room's walkable rectangle,
    `DOOR_OVERLAP` further in, so that door -> approach point crosses the wall straight."""
    x0, y0, x1, y1 = rect
    e = DOOR_OVERLAP
    return min(max(p[0], x0 + e), x1 - e), min(max(p[1], y0 + e), y1 - e)


def _door_rect(
    pos: Sequence[float],
    width: float,
    a: tuple[float, float, float, float],
    b: tuple[float, float, float, float],
) -> tuple[float, float, float, float]:
    """A door's opening: from the door across the wall into both rooms' walkable rectangles
    (`DOOR_OVERLAP` deep), `width` wide along the wall."""
    px, py = float(pos[0]), float(pos[1])
    pts = [(px, py)] + [(min(max(px, r[0]), r[2]), min(max(py, r[1]), r[3])) for r in (a, b)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    vertical_wall = (max(xs) - min(xs)) >= (max(ys) - min(ys))  # the opening runs across x
    if vertical_wall:
        return min(xs) - DOOR_OVERLAP, py - width / 2, max(xs) + DOOR_OVERLAP, py + width / 2
    return px - width / 2, min(ys) - DOOR_OVERLAP, px + width / 2, max(ys) + DOOR_OVERLAP


@dataclass(frozen=True)
class RobotView:
    """What a policy sees of one robot at one tick: its BELIEVED pose (dead reckoning since the last
    fix; the true pose when actuation is exact)."""

    robot: str
    x: float
    y: float
    heading: int  # 0..11, times 30 degrees, counter-clockwise from +x (believed)
    stage: int  # index into this robot's own sub-task list
    subtask: SubTask
    blocked: bool  # the robot's last forward was blocked
    time: float  # seconds since the start


class Policy(Protocol):
    """Chooses each robot's next action; `begin` is called once per run, before the first tick."""

    def begin(
        self, index: SceneIndex, plan: Sequence[SubTask], starts: Mapping[str, tuple[float, float]]
    ) -> None:
        """Prepare for a run of `plan` from `starts`."""
        ...

    def act(self, view: RobotView) -> str:
        """One of `SIM_ACTIONS`."""
        ...


@dataclass
class SubtaskResult:
    """How one sub-task of the plan went (LH-VLN's per-stage record)."""

    success: bool = False
    oracle_success: bool = False
    steps: int = 0  # actions taken, the stop included; waits excluded
    nav_error: float = math.inf  # geodesic metres to the node when it ended
    gt_length: float = math.inf  # geodesic metres from where it began
    end_time: float = math.nan  # seconds


@dataclass
class RobotTrace:
    """One robot's run: true and believed positions per tick (the start first), what it did each
    tick (`activity`: "move" for an action, "wait", or "done"), path length, waiting, finish time."""

    robot: str
    positions: list[tuple[float, float]] = field(default_factory=list)
    beliefs: list[tuple[float, float]] = field(default_factory=list)
    activity: list[str] = field(default_factory=list)
    path_length: float = 0.0
    wait_time: float = 0.0
    finish_time: float = 0.0  # seconds at the robot's last action (0 for an idle robot)


@dataclass
class SimResult:
    """A run: per-sub-task results in plan order, per-robot traces, makespan and interference;
    `plan` is the plan that was run and `dt` the seconds per tick (for figures)."""

    subtasks: list[SubtaskResult]
    traces: dict[str, RobotTrace]
    makespan: float  # seconds until the last action of any robot
    interference: int
    delivered: bool  # the object reached e
    ticks: int
    plan: tuple[SubTask, ...] = ()
    dt: float = 0.5


@dataclass
class _Robot:
    name: str
    x: float
    y: float
    h: int  # the believed heading, 0..11
    stages: list[int]  # plan indices of this robot's sub-tasks, in order
    stage: int = 0
    stage_steps: int = 0
    waiting: bool = False
    blocked: bool = False
    trace: RobotTrace = field(default_factory=lambda: RobotTrace(""))
    bx: float = 0.0  # the believed position (dead reckoning)
    by: float = 0.0
    dh: float = 0.0  # degrees: the true heading is h * 30 + dh
    rng: random.Random | None = None  # the actuation noise (None when exact)

    def record(self, activity: str) -> None:
        self.trace.positions.append((self.x, self.y))
        self.trace.beliefs.append((self.bx, self.by))
        self.trace.activity.append(activity)

    def relocalise(self) -> None:
        """The belief becomes the true pose; the heading re-aligns to the nearest of the 12."""
        self.bx, self.by = self.x, self.y
        if self.dh:
            k = round(self.dh / TURN_DEGREES)
            self.h, self.dh = (self.h + k) % HEADINGS, 0.0

    @property
    def done(self) -> bool:
        return self.stage >= len(self.stages)


def simulate(
    index: SceneIndex,
    plan: Sequence[SubTask],
    starts: Mapping[str, tuple[float, float]],
    policy: Policy,
    *,
    budgets: Sequence[int] | int = 500,
    headings: Mapping[str, int] | None = None,
    standalone: bool = False,
    config: SimConfig | None = None,
    seed: int = 0,
) -> SimResult:
    """Run `plan` (sub-tasks of all robots in schedule order) from `starts` (robot -> (x, y)),
    asking `policy` for each robot's actions in lock step (`policy.begin` first). `budgets` caps
    each sub-task's steps; `headings` (robot -> 0..11) default to 0; `seed` seeds the actuation
    noise (each robot's from `derive_seed(seed, robot)`)."""
    cfg = config or SimConfig()
    unknown = sorted({s.robot for s in plan} - set(starts))
    if unknown:
        raise ValueError(
            f"plan has sub-tasks for robots {unknown} without a start; starts has {sorted(starts)}"
        )
    budget = [budgets] * len(plan) if isinstance(budgets, int) else list(budgets)
    if len(budget) != len(plan):
        raise ValueError(f"budgets has {len(budget)} entries for a plan of {len(plan)} sub-tasks")
    headings = headings or {}
    robots = [
        _Robot(
            r,
            float(p[0]),
            float(p[1]),
            headings.get(r, 0) % HEADINGS,
            [i for i, s in enumerate(plan) if s.robot == r],
        )
        for r, p in starts.items()
    ]
    for rb in robots:
        rb.trace = RobotTrace(rb.name, [(rb.x, rb.y)], [(rb.x, rb.y)])
        rb.bx, rb.by = rb.x, rb.y  # every run starts localised
        if cfg.noisy:
            rb.rng = random.Random(derive_seed(seed, rb.name))
    results = [SubtaskResult() for _ in plan]
    holder: str | None = None  # who holds the object: None while at t, "e" once delivered
    rendezvous_nodes = {s.node for s in plan if s.action in RENDEZVOUS}
    R = cfg.success_radius

    def begin_stage(rb: _Robot) -> None:
        rb.stage_steps = 0
        if rb.done:
            return
        i = rb.stages[rb.stage]
        d = index.geodesic(rb.x, rb.y, plan[i].node)
        results[i].gt_length = d
        results[i].oracle_success = d < R

    def end_stage(rb: _Robot, success: bool, t: float) -> None:
        i = rb.stages[rb.stage]
        res = results[i]
        res.success = success
        res.steps = rb.stage_steps
        res.nav_error = index.geodesic(rb.x, rb.y, plan[i].node)
        res.end_time = t
        rb.trace.finish_time = t
        if success and cfg.relocalise_on_interaction and plan[i].action in INTERACTIONS:
            rb.relocalise()  # it recognises the object
        rb.stage += 1
        rb.waiting = False
        begin_stage(rb)

    def near(rb: _Robot, node: int) -> bool:
        return index.geodesic(rb.x, rb.y, node) < R

    def on_stop(rb: _Robot, t: float) -> None:
        nonlocal holder
        sub = plan[rb.stages[rb.stage]]
        ok = near(rb, sub.node)
        if sub.action in RENDEZVOUS and not standalone:
            rb.waiting = True  # resolved with the partner below
            return
        if not standalone:
            if sub.action == "pick":
                ok = ok and holder is None
                holder = rb.name if ok else holder
            elif sub.action == "place":
                ok = ok and holder == rb.name
                holder = "e" if ok else holder
        end_stage(rb, ok, t)

    def can_come(partner: _Robot, action: str) -> bool:
        if partner.done:
            return False
        if partner.waiting:
            return plan[partner.stages[partner.stage]].action == RENDEZVOUS[action]
        return any(plan[i].action == RENDEZVOUS[action] for i in partner.stages[partner.stage :])

    policy.begin(index, plan, starts)
    for rb in robots:
        begin_stage(rb)
    close = False
    interference = 0
    tick = 0
    while any(not rb.done for rb in robots) and tick < cfg.max_ticks:
        tick += 1
        t = tick * cfg.dt
        for rb in robots:
            if rb.done or rb.waiting:
                if rb.waiting:
                    rb.trace.wait_time += cfg.dt
                rb.record("wait" if rb.waiting else "done")
                continue
            i = rb.stages[rb.stage]
            sub = plan[i]
            action = policy.act(RobotView(rb.name, rb.bx, rb.by, rb.h, rb.stage, sub, rb.blocked, t - cfg.dt))
            if action == "wait":
                rb.trace.wait_time += cfg.dt
                rb.record("wait")
                continue
            rb.stage_steps += 1
            if action == "forward":
                step, c, s = FORWARD_STEP, _COS[rb.h], _SIN[rb.h]
                if rb.rng is not None:
                    step = FORWARD_STEP * max(0.0, 1.0 + cfg.forward_noise * rb.rng.gauss(0.0, 1.0))
                    if rb.dh:
                        a = math.radians(rb.h * TURN_DEGREES + rb.dh)
                        c, s = math.cos(a), math.sin(a)
                nx_, ny_ = rb.x + step * c, rb.y + step * s
                rb.blocked = not index.walkable(nx_, ny_)  # the true move; the bump is sensed
                if not rb.blocked:
                    rb.x, rb.y = nx_, ny_
                    rb.bx, rb.by = rb.bx + FORWARD_STEP * _COS[rb.h], rb.by + FORWARD_STEP * _SIN[rb.h]
                    rb.trace.path_length += step
                    gx, gy = index.pos[sub.node]
                    if not results[i].oracle_success and math.hypot(rb.x - gx, rb.y - gy) < R:
                        results[i].oracle_success = near(rb, sub.node)  # geodesic >= Euclidean
            elif action in ("left", "right"):
                rb.h = (rb.h + (1 if action == "left" else -1)) % HEADINGS
                if rb.rng is not None and cfg.turn_noise > 0:
                    rb.dh += cfg.turn_noise * rb.rng.gauss(0.0, 1.0)
            elif action == "stop":
                rb.trace.finish_time = t
                on_stop(rb, t)
            else:
                raise ValueError(
                    f"policy returned action {action!r} for {rb.name}; expected one of {SIM_ACTIONS}"
                )
            rb.record("move")
            if not rb.done and not rb.waiting and rb.stage_steps >= budget[rb.stages[rb.stage]]:
                end_stage(rb, False, t)  # the step budget is spent
        # the rendezvous: resolve complementary waiting pairs, release robots whose partner cannot come
        waiting = [rb for rb in robots if rb.waiting]
        for rb in waiting:
            if not rb.waiting:
                continue
            act = plan[rb.stages[rb.stage]].action
            partners = [p for p in robots if p is not rb]
            mate = next(
                (p for p in partners if p.waiting and plan[p.stages[p.stage]].action == RENDEZVOUS[act]), None
            )
            if mate is not None:
                giver, taker = (rb, mate) if act == "handoff" else (mate, rb)
                node_g, node_t = plan[giver.stages[giver.stage]].node, plan[taker.stages[taker.stage]].node
                ok = near(giver, node_g) and near(taker, node_t) and holder == giver.name
                holder = taker.name if ok else holder
                end_stage(giver, ok, t)
                end_stage(taker, ok, t)
            elif not any(can_come(p, act) for p in partners):
                end_stage(rb, False, t)
        if len(robots) == 2:
            a, b = robots
            now = math.hypot(a.x - b.x, a.y - b.y) < cfg.interference_radius
            if now:
                now = not any(near(a, n) and near(b, n) for n in rendezvous_nodes)
            interference += now and not close  # an event at each onset
            close = now
    for rb in robots:
        while not rb.done:  # the tick cap: every open sub-task fails
            end_stage(rb, False, tick * cfg.dt)
    traces = {rb.name: rb.trace for rb in robots}
    makespan = max((tr.finish_time for tr in traces.values()), default=0.0)
    return SimResult(results, traces, makespan, interference, holder == "e", tick, tuple(plan), cfg.dt)
