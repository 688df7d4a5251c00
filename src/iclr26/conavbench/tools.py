"""The efficiency tool library of CoNavBench/NavCraft (ICLR 2026): the numeric checks the
generation agent calls while it builds a collaborative mission.

- reachability (`reachable`, `ShortestPaths`), travel time (`travel_time`: length / v, v = 0.5 m/s;
  no turn cost) and corridor width (`corridor_width`: the narrowest edge along a path);
- timed paths (`timed_path`): a robot's node walk with waits, as `Visit`s; `occupancy` lists which
  robot holds which node or edge when;
- interference (`conflicts`): node conflicts (two robots' node occupancies overlap in time) and
  edge conflicts (a swap: opposite traversals of one edge overlap; or two traversals of a narrow
  edge, width < 2 x robot width, overlap);
- rendezvous (`synchronize`): at the relay node the robot that arrives first waits for the other;
- schedule repair (`repair`): wait insertion (delay the later robot before the conflict) or a
  reroute (avoid the conflicting node or edge when the detour is short), counting each repair.

Occupancy is what the paper leaves open; ours: a robot of width w moving at v holds a node from
w / (2v) seconds before it arrives until w / (2v) after it leaves, and an edge while it traverses
it. A robot whose path has ended (parked at its last node) holds nothing: it steps aside.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import networkx as nx

from iclr26.conavbench.episode import Visit
from iclr26.conavbench.scene import Scene

SPEED = 0.5
"""Robot speed in m/s (both robots)."""
ROBOT_WIDTH = 0.6
"""A robot's width in metres (Fetch's base is 0.56 m, Spot's body 0.5 m): the default clearance."""
REROUTE_SLACK = 0.25
"""A reroute is taken only when it is at most 25% longer than the segment it replaces."""
MAX_REPAIRS = 64
"""`repair` gives up (`ScheduleError`) after this many repairs."""
EPS = 1e-6
"""Seconds: intervals overlapping by less are not conflicts; a wait is padded by this much."""


class ScheduleError(RuntimeError):
    """`repair` could not make a schedule conflict-free."""


class ShortestPaths:
    """Cached single-source Dijkstra over a scene's `length`s: `distance(a, b)`, `path(a, b)`."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self._cache: dict[int, tuple[dict[int, float], dict[int, list[int]]]] = {}

    def _source(self, a: int) -> tuple[dict[int, float], dict[int, list[int]]]:
        if a not in self._cache:
            self._cache[a] = nx.single_source_dijkstra(self.scene.graph, a, weight="length")
        return self._cache[a]

    def distance(self, a: int, b: int) -> float:
        """Shortest walkable distance a -> b in metres (inf when unreachable)."""
        return float(self._source(a)[0].get(b, float("inf")))

    def path(self, a: int, b: int) -> list[int]:
        """The shortest node path a -> b (NetworkXNoPath when unreachable)."""
        p = self._source(a)[1].get(b)
        if p is None:
            raise nx.NetworkXNoPath(f"scene {self.scene.id}: no path from node {a} to node {b}")
        return list(p)


def reachable(scene: Scene, a: int, b: int) -> bool:
    """Whether node b can be walked to from node a (False when either node is not in the scene)."""
    g = scene.graph
    return a in g and b in g and nx.has_path(g, a, b)


def path_length(scene: Scene, nodes: Sequence[int]) -> float:
    """The summed edge `length` of a node walk (metres)."""
    g = scene.graph
    return float(sum(g.edges[u, v]["length"] for u, v in pairwise(nodes)))


def travel_time(scene: Scene, nodes: Sequence[int], speed: float = SPEED) -> float:
    """Seconds to walk `nodes` at `speed` m/s: length / speed (turns cost nothing)."""
    if speed <= 0:
        raise ValueError(f"speed must be > 0 m/s, got {speed!r}")
    return path_length(scene, nodes) / speed


def corridor_width(scene: Scene, nodes: Sequence[int]) -> float:
    """The narrowest edge `width` along a node walk (inf for a walk of one node)."""
    g = scene.graph
    return float(min((g.edges[u, v]["width"] for u, v in pairwise(nodes)), default=float("inf")))


@dataclass(frozen=True)
class TimedPath:
    """One robot's timed walk: `nodes`, the seconds waited at each (`waits`), the derived `visits`.

    `pins` are the indices a reroute must keep (start, waypoints, end); `meet` is the index of the
    rendezvous at the relay node (None without one).
    """

    robot: str
    nodes: tuple[int, ...]
    waits: tuple[float, ...]
    visits: tuple[Visit, ...]
    start: float
    speed: float
    pins: tuple[int, ...]
    meet: int | None = None

    @property
    def end_time(self) -> float:
        """When the robot leaves its last node (it parks there)."""
        return self.visits[-1].depart


def timed_path(
    scene: Scene,
    robot: str,
    nodes: Sequence[int],
    start_time: float = 0.0,
    waits: Mapping[int, float] | Sequence[float] | None = None,
    *,
    speed: float = SPEED,
    pins: Collection[int] = (),
    meet: int | None = None,
) -> TimedPath:
    """Time a node walk: arrive_i = depart_{i-1} + length(i-1, i) / speed, depart_i = arrive_i + wait_i.

    `waits` maps a position in `nodes` (not a node id: a walk may revisit a node) to seconds, or
    gives one wait per node. The first and last positions are always pinned.
    """
    if not nodes:
        raise ValueError("nodes must name at least one node")
    if speed <= 0:
        raise ValueError(f"speed must be > 0 m/s, got {speed!r}")
    g = scene.graph
    for u, v in pairwise(nodes):
        if not g.has_edge(u, v):
            raise ValueError(f"scene {scene.id}: robot {robot}'s walk uses ({u}, {v}), which is not an edge")
    if waits is None:
        w = [0.0] * len(nodes)
    elif isinstance(waits, Mapping):
        w = [float(waits.get(i, 0.0)) for i in range(len(nodes))]
    else:
        if len(waits) != len(nodes):
            raise ValueError(f"waits has {len(waits)} entries for {len(nodes)} nodes")
        w = [float(x) for x in waits]
    if any(x < 0 for x in w):
        raise ValueError(f"waits must be >= 0 seconds, got {w}")
    visits, t = [], float(start_time)
    for i, n in enumerate(nodes):
        if i:
            t += g.edges[nodes[i - 1], n]["length"] / speed
        visits.append(Visit(robot=robot, node=int(n), arrive=t, depart=t + w[i]))
        t += w[i]
    pinned = sorted({0, len(nodes) - 1, *pins, *([] if meet is None else [meet])})
    return TimedPath(
        robot,
        tuple(int(n) for n in nodes),
        tuple(w),
        tuple(visits),
        float(start_time),
        speed,
        tuple(pinned),
        meet,
    )


def _retime(
    scene: Scene, tp: TimedPath, nodes: Sequence[int], waits: Sequence[float], pins, meet
) -> TimedPath:
    return timed_path(scene, tp.robot, nodes, tp.start, list(waits), speed=tp.speed, pins=pins, meet=meet)


@dataclass(frozen=True)
class Occupancy:
    """Robot `robot` holds `where` (a node id, or a directed edge (u, v)) from `start` to `end`;
    `index` is the position in its walk (of the node, or of the edge's first node)."""

    robot: str
    kind: str  # "node" or "edge"
    where: int | tuple[int, int]
    start: float
    end: float
    index: int


def occupancy(timed_paths: Sequence[TimedPath], *, clearance: float = ROBOT_WIDTH) -> list[Occupancy]:
    """Every node and edge occupancy of the robots, sorted by start time.

    A node is held from arrive - w/(2v) to depart + w/(2v) (w = `clearance`, the robot's width);
    an edge from leaving one end to arriving at the other.
    """
    out = []
    for tp in timed_paths:
        h = clearance / (2 * tp.speed)
        for i, v in enumerate(tp.visits):
            out.append(Occupancy(tp.robot, "node", v.node, v.arrive - h, v.depart + h, i))
            if i + 1 < len(tp.visits):
                nxt = tp.visits[i + 1]
                out.append(Occupancy(tp.robot, "edge", (v.node, nxt.node), v.depart, nxt.arrive, i))
    return sorted(out, key=lambda o: (o.start, o.robot, o.index, o.kind))


@dataclass(frozen=True)
class Conflict:
    """Two robots' overlapping occupancies: kind "node", "swap" (opposite on one edge) or "narrow"
    (one narrow edge in overlapping intervals); `a`, `b` the two occupancies."""

    kind: str
    a: Occupancy
    b: Occupancy

    @property
    def start(self) -> float:
        return max(self.a.start, self.b.start)


def conflicts(
    scene: Scene,
    timed_a: TimedPath,
    timed_b: TimedPath,
    *,
    clearance: float = ROBOT_WIDTH,
    exempt: Collection[int] = (),
) -> list[Conflict]:
    """Node and edge conflicts between two timed paths, earliest first.

    Node: both hold one node in overlapping intervals (not at `exempt` nodes, e.g. the relay where
    the robots meet on purpose). Edge: a swap (opposite traversals of one edge overlap), or both on
    an edge narrower than 2 x `clearance` in overlapping intervals.
    """
    occ_a = occupancy([timed_a], clearance=clearance)
    occ_b = occupancy([timed_b], clearance=clearance)
    found = []
    for oa in occ_a:
        for ob in occ_b:
            if oa.kind != ob.kind or min(oa.end, ob.end) - max(oa.start, ob.start) <= EPS:
                continue
            if oa.kind == "node":
                if oa.where == ob.where and oa.where not in exempt:
                    found.append(Conflict("node", oa, ob))
                continue
            (u, v), (p, q) = oa.where, ob.where  # type: ignore[misc]
            if (u, v) == (q, p):
                found.append(Conflict("swap", oa, ob))
            elif (u, v) == (p, q) and scene.graph.edges[u, v]["width"] < 2 * clearance:
                found.append(Conflict("narrow", oa, ob))
    return sorted(found, key=lambda c: (c.start, c.kind))


def synchronize(paths: Mapping[str, TimedPath], scene: Scene) -> dict[str, TimedPath]:
    """The rendezvous: every robot with a `meet` index departs it at the latest arrival there
    (the first to arrive waits); waits elsewhere are kept."""
    meeting = {r: tp for r, tp in paths.items() if tp.meet is not None}
    out = dict(paths)
    if not meeting:
        return out
    # a wait at the meet index moves only what comes after it, so the arrivals there are fixed
    sync = max(tp.visits[tp.meet].arrive for tp in meeting.values())  # type: ignore[index]
    for r, tp in meeting.items():
        waits = list(tp.waits)
        waits[tp.meet] = sync - tp.visits[tp.meet].arrive  # type: ignore[index]
        out[r] = _retime(scene, tp, tp.nodes, waits, tp.pins, tp.meet)
    return out


@dataclass(frozen=True)
class Repaired:
    """`repair`'s result: the conflict-free paths and each repair made, in order ("wait"/"reroute")."""

    paths: dict[str, TimedPath]
    kinds: tuple[str, ...] = field(default=())

    @property
    def repairs(self) -> int:
        return len(self.kinds)


def _reroute(scene: Scene, tp: TimedPath, occ: Occupancy, delay: float) -> TimedPath | None:
    """`tp` with the pinned segment around `occ` replaced by a path avoiding its node/edge, when
    the detour is at most REROUTE_SLACK longer and costs less time than waiting `delay`."""
    i = occ.index
    if occ.kind == "node":
        if i in tp.pins:
            return None
        p = max(k for k in tp.pins if k < i)
        q = min(k for k in tp.pins if k > i)
        view = nx.subgraph_view(scene.graph, filter_node=lambda n: n != occ.where)
    else:
        p = max(k for k in tp.pins if k <= i)
        q = min(k for k in tp.pins if k >= i + 1)
        bad = set(occ.where)  # type: ignore[arg-type]
        view = nx.subgraph_view(scene.graph, filter_edge=lambda u, v: {u, v} != bad)
    a, b = tp.nodes[p], tp.nodes[q]
    try:
        alt = nx.shortest_path(view, a, b, weight="length")
    except nx.NetworkXNoPath:
        return None
    old = path_length(scene, tp.nodes[p : q + 1])
    extra = path_length(scene, alt) - old
    if extra > REROUTE_SLACK * old or extra / tp.speed >= delay:
        return None
    shift = len(alt) - (q - p + 1)
    nodes = [*tp.nodes[:p], *alt, *tp.nodes[q + 1 :]]
    waits = [*tp.waits[:p], tp.waits[p], *([0.0] * (len(alt) - 2)), tp.waits[q], *tp.waits[q + 1 :]]
    pins = [k if k <= p else k + shift for k in tp.pins]
    meet = None if tp.meet is None else (tp.meet if tp.meet <= p else tp.meet + shift)
    return _retime(scene, tp, nodes, waits, pins, meet)


def repair(
    scene: Scene,
    schedule: Mapping[str, TimedPath],
    *,
    clearance: float = ROBOT_WIDTH,
    exempt: Collection[int] = (),
) -> Repaired:
    """Make a two-robot schedule conflict-free, one conflict at a time, earliest first.

    The later robot (the one entering the contested node/edge later) is delayed: it waits at the
    node before the node conflict, or before entering the contested edge, until the other has left
    (wait insertion); a reroute around the contested node/edge replaces the wait when it is short
    (at most REROUTE_SLACK longer) and quicker than the wait. The rendezvous is re-synchronized after
    each repair. Raises `ScheduleError` when the conflicts persist after MAX_REPAIRS repairs.
    """
    if len(schedule) != 2:
        raise ValueError(f"repair takes two robots' paths, got {sorted(schedule)}")
    ra, rb = list(schedule)
    paths = synchronize(schedule, scene)
    kinds: list[str] = []
    while True:
        found = conflicts(scene, paths[ra], paths[rb], clearance=clearance, exempt=exempt)
        if not found:
            return Repaired(paths, tuple(kinds))
        if len(kinds) >= MAX_REPAIRS:
            raise ScheduleError(f"scene {scene.id}: {len(found)} conflicts left after {len(kinds)} repairs")
        c = found[0]
        # the later robot yields; ties go to the second robot of the schedule (the helper)
        late, early = (c.a, c.b) if c.a.start > c.b.start + EPS else (c.b, c.a)
        if late.kind == "node" and late.index == 0:
            late, early = early, late  # a robot on its start node cannot wait before it: the other yields
            if late.index == 0:
                raise ScheduleError(f"scene {scene.id}: both robots start on node {late.where}")
        delay = early.end - late.start + EPS
        tp = paths[late.robot]
        rerouted = _reroute(scene, tp, late, delay)
        if rerouted is not None:
            paths[late.robot] = rerouted
            kinds.append("reroute")
        else:
            k = late.index - 1 if late.kind == "node" else late.index
            waits = list(tp.waits)
            waits[k] += delay
            paths[late.robot] = _retime(scene, tp, tp.nodes, waits, tp.pins, tp.meet)
            kinds.append("wait")
        paths = synchronize(paths, scene)
